//! One file per subcommand.

pub mod bench;
pub mod devices;
pub mod hash;
pub mod pow;
