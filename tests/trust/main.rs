//! Why loadsim can be trusted (`docs/trust.md`): agreement with queueing theory within
//! confidence intervals, bookkeeping invariants on random scenarios, and hostile input that ends
//! as a diagnostic, never a panic, a hang or a silent misreading.

mod common;
mod fuzz;
mod hostile;
mod invariants;
mod limits;
mod queueing;
mod resources;
mod theory;
