//! Utilities the library and its binary share.

pub mod line_reader;
