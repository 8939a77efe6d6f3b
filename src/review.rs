//! review (to be written).
