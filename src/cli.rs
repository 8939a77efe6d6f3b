//! Command-line types (clap only).
