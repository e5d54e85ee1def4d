//! Output accounting shared by both backends: the byte meter and the isolate's output ledger.

pub mod json;
pub mod logbook;
pub mod meter;
pub mod output;
pub mod text;
