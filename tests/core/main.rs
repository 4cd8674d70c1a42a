//! Integration tests of the simulator core: the article's claims, exact mechanics on tiny
//! scenarios, determinism, bad input, the CLI and the snapshot tables, `loadsim test`.

mod analysis;
mod article;
mod bad_input;
mod cli;
mod common;
mod determinism;
mod mechanics;
mod protections;
mod snapshots;
mod test_cmd;
mod ux;
