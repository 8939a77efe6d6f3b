//! scan (to be written).
