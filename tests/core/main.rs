//! Integration tests of the simulator core: the article's claims, exact mechanics on tiny
//! scenarios, determinism, bad input, the CLI, the documentation, the snapshot tables and
//! `loadsim test`.

mod action;
mod analysis;
mod article;
mod bad_input;
mod calibrate;
mod classes;
mod cli;
mod common;
mod determinism;
mod dists;
mod docs;
mod exporter;
mod files;
mod fleet;
mod guard;
mod import;
mod layers;
mod mechanics;
mod production;
mod protections;
mod snapshots;
mod spans;
mod test_cmd;
mod traces;
mod tune;
mod ux;
mod workload;
