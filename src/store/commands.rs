//! The `cq list|show|decide|status|reviewers` commands (to be written).
