//! `loadsim run --timeseries FILE.csv --plot DIR` as users call it.

use assert_cmd::Command;

use super::common::scenario_path;

fn loadsim() -> Command {
    Command::cargo_bin("loadsim").unwrap()
}

#[test]
fn run_writes_the_csv_and_the_figures_and_still_prints_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("ts.csv");
    let plots = dir.path().join("plots");
    let out = loadsim()
        .args([
            "run",
            "--set",
            "duration=5s",
            "--set",
            "faults.slow_b.from=1s",
        ])
        .args([
            "--set",
            "faults.slow_b.duration=2s",
            "--timeseries-resolution",
            "500ms",
        ])
        .arg(scenario_path("naive"))
        .arg(scenario_path("protected"))
        .arg("--timeseries")
        .arg(&csv)
        .arg("--plot")
        .arg(&plots)
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(stdout.contains("recovery time (s)"), "the table on stdout");
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("success_rate.svg"),
        "written files on stderr"
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("scenario,t_s,series,value"));
    assert!(text.contains("\nnaive,0.5,users.arrivals,"));
    assert!(text.contains("\nprotected,0.0,calls.svc_a->svc_b.tokens,10\n"));
    for f in ["success_rate.svg", "queue_length.svg", "amplification.svg"] {
        assert!(plots.join(f).is_file(), "{f}");
    }
}

#[test]
fn a_bad_resolution_is_a_usage_error() {
    for bad in ["0s", "10us", "fast"] {
        loadsim()
            .args([
                "run",
                "--timeseries-resolution",
                bad,
                "--timeseries",
                "x.csv",
            ])
            .arg(scenario_path("naive"))
            .assert()
            .code(2);
    }
    let dir = tempfile::tempdir().unwrap();
    let out = loadsim()
        .args([
            "run",
            "--timeseries-resolution",
            "1ms",
            "--set",
            "duration=2h",
        ])
        .arg(scenario_path("naive"))
        .arg("--timeseries")
        .arg(dir.path().join("x.csv"))
        .assert()
        .code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("choose a wider bin"), "{stderr}");
}
