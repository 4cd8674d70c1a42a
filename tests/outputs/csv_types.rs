//! Every CSV loadsim writes reads back with Python's `csv` module into typed columns
//! (`csv_check.py`, beside this file): no JSON inside a cell (`replica_stats` is a column per replica and counter),
//! each column of one kind, and csv-long's `value` and the time series' `t_s` and `value` numeric
//! throughout. Covers the run formats on scenarios with replicas and request classes, the time
//! series (with their per-class and per-replica series), a boundary search's files, and every
//! committed CSV under `evidence/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{loadsim_ok, repo};

/// Runs csv_check.py on `files`; `numeric` columns must hold numbers only.
fn python_reads(files: &[PathBuf], numeric: &[&str]) {
    let mut cmd = Command::new("python3");
    cmd.arg(repo().join("tests/outputs/csv_check.py"));
    cmd.args(files);
    for n in numeric {
        cmd.args(["--numeric", n]);
    }
    let out = cmd
        .output()
        .expect("python3 runs (it is on the machine and on CI)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        text.lines().count(),
        files.len(),
        "one line per file read: {text}"
    );
}

const RUN: [&str; 3] = [
    "scenarios/fleet/slow_replica.yaml",
    "scenarios/workload/classes_fifo.yaml",
    "scenarios/naive.yaml",
];

#[test]
fn run_csv_outputs_read_back_typed() {
    let dir = tempfile::tempdir().unwrap();
    let path = |n: &str| dir.path().join(n);
    let mut files = Vec::new();
    for (format, name) in [("csv", "wide.csv"), ("csv-long", "long.csv")] {
        let out = path(name);
        let mut args = vec!["run"];
        args.extend(RUN);
        args.extend(["--format", format, "--quiet", "-o", out.to_str().unwrap()]);
        loadsim_ok(&args);
        files.push(out);
    }
    let ts = path("series.csv");
    let mut args = vec!["run"];
    args.extend(RUN);
    args.extend(["--timeseries", ts.to_str().unwrap()]);
    loadsim_ok(&args);
    files.push(ts);
    python_reads(&files, &["value", "t_s", "seed"]);
    // The type check covers the per-class and per-replica series.
    let series = std::fs::read_to_string(&files[2]).unwrap();
    for name in [
        ",classes.checkout.success_rate,",
        ",classes.browse.arrivals,",
        ",services.backend.replica.0.busy_mean,",
        ",services.backend.replica.2.queue_mean,",
    ] {
        assert!(series.contains(name), "the time series has {name}");
    }

    // The replicas are columns, and csv-long has them as rows of plain numbers.
    let wide = std::fs::read_to_string(&files[0]).unwrap();
    let header = wide.lines().next().unwrap();
    assert!(
        header.contains(",services.backend.replica_stats.0.arrivals,"),
        "{header}"
    );
    assert!(!header.split(',').any(|c| c.ends_with(".replica_stats")));
    let long = std::fs::read_to_string(&files[1]).unwrap();
    assert!(
        long.lines()
            .any(|l| l.contains(",services,backend,replica_stats.1.completed,"))
    );
    // A yes/no metric is 1 or 0 in the long form, as the run JSON's true or false.
    let recovered = long
        .lines()
        .find(|l| l.starts_with("naive,") && l.contains(",metrics,,recovered,"))
        .expect("naive's `recovered` row");
    assert!(
        recovered.ends_with(",1") || recovered.ends_with(",0") || recovered.ends_with(','),
        "{recovered}"
    );
}

fn csv_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            csv_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "csv") {
            out.push(p);
        }
    }
}

#[test]
fn boundary_and_committed_csv_files_read_back_typed() {
    let dir = tempfile::tempdir().unwrap();
    loadsim_ok(&[
        "boundary",
        "scenarios/naive.yaml",
        "--vary",
        "faults.slow_b.duration",
        "--range",
        "0s..20s",
        "--steps",
        "3",
        "--tolerance",
        "10s",
        "--quiet",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let mut files = Vec::new();
    csv_files(dir.path(), &mut files);
    assert!(files.len() >= 2, "probes and boundary: {files:?}");
    csv_files(&repo().join("evidence"), &mut files);
    files.sort();
    assert!(
        files
            .iter()
            .any(|f| f.ends_with("evidence/fleet/results.csv")),
        "the sweep of replicated services is among them"
    );
    python_reads(&files, &["value", "t_s"]);
}
