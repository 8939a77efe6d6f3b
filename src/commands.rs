//! commands (to be written).

pub mod scan;
