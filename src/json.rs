//! json (to be written).
