//! The interface both backends share: reserved names and binding validation (spec seam.md §3–§4).

pub mod reserved;
pub mod validate;
