//! Integration tests of the simulator core: the article's claims, exact mechanics on tiny
//! scenarios, determinism, bad input, the CLI, the documentation and the snapshot tables.

mod analysis;
mod article;
mod bad_input;
mod cli;
mod common;
mod determinism;
mod docs;
mod mechanics;
mod protections;
mod snapshots;
mod ux;
