//! policy (to be written).
