//! The interface both backends share: reserved names and binding validation (docs/seam.md).

pub mod reserved;
pub mod validate;
