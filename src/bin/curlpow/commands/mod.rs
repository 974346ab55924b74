//! One file per subcommand.

pub mod attach;
pub mod bench;
pub mod devices;
pub mod hash;
pub mod pow;
pub mod serve;
pub mod tune;
pub mod worker;
