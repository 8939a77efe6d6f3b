//! engine (to be written).
