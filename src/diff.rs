//! diff (to be written).
