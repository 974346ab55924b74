//! placeholder, filled by the next commit
