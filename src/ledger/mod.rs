//! Output accounting shared by both backends: the byte meter and the isolate's output ledger.

pub mod byte_meter;
pub mod json;
pub mod logbook;
pub mod output;
pub mod text;
