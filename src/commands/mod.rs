//! The subcommands as library functions. Owns what each command does between parsed arguments and
//! text on stdout, so the binary stays a thin shell and tests can call commands directly. What
//! commands share — loading with overrides, the parallel map, progress, writing outputs — is the
//! grid runner, [`crate::runner`].

pub mod boundary;
pub mod calibrate;
pub mod check;
pub mod import;
pub mod man;
pub mod new;
pub mod run;
pub mod schema;
pub mod seeds;
pub mod sweep;
pub mod test;
pub mod tune;

pub use crate::util::Output;
