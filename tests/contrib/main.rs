//! Tests of what ships in `contrib/`: the Kubernetes manifests against the Job schema and against
//! the commands they run. (The Slurm path is tested end to end by `contrib/slurm/e2e.sh`, which
//! needs root and a cluster of its own, so `.ci/run` runs it rather than `cargo test`.)

mod k8s;
