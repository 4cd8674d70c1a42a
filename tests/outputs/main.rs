//! Tests of the outputs made for people and other systems rather than of the simulator: the
//! command-line conventions (`--color`, `loadsim man`), the HTML report (self-contained, every
//! figure, the sources) and what ships in `contrib/` (the Kubernetes manifests against the Job
//! schema and the commands they run). The
//! Slurm path is tested end to end by `contrib/slurm/e2e.sh` and the HTML page in a real browser
//! by `contrib/html/check.sh`; both need root and Debian packages, so `.ci/run` runs them rather
//! than `cargo test`.

mod cli;
mod html;
mod k8s;
mod metrics;
mod typed;
