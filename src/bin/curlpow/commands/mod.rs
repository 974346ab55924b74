//! One file per subcommand.

pub mod attach;
pub mod bench;
pub mod block_pow;
pub mod block_score;
pub mod devices;
pub mod doctor;
pub mod generate_docs;
pub mod hash;
pub mod pow;
pub mod serve;
pub mod tune;
pub mod verify;
pub mod worker;
