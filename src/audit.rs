//! audit (to be written).
