//! `contrib/k8s/`: every manifest validates against the batch/v1 Job and v1 PersistentVolumeClaim
//! subset in `kubernetes.schema.json`; the Indexed Job's shard count, index arithmetic, volume and
//! image agree with each other, with the merge Job, the Dockerfile and the CLI.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use super::repo;

fn manifest(name: &str) -> Value {
    let path = repo().join("contrib/k8s").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: yaml_serde::Value = yaml_serde::from_str(&text).unwrap();
    serde_json::to_value(v).unwrap()
}

fn validator() -> jsonschema::Validator {
    let path = repo().join("tests/outputs/kubernetes.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::draft7::new(&schema).expect("a valid draft-7 schema")
}

/// What is broken, and how.
type Broken = (&'static str, fn(&mut Value));

fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

fn manifests() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("contrib/k8s"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_manifest_validates_against_the_kubernetes_schema() {
    let v = validator();
    let files = manifests();
    assert_eq!(files.len(), 3, "{files:?}");
    for f in files {
        let name = f.file_name().unwrap().to_str().unwrap();
        let errs = errors(&v, &manifest(name));
        assert!(errs.is_empty(), "{name}: {errs:#?}");
    }
}

#[test]
fn the_schema_refuses_what_the_api_server_would() {
    let v = validator();
    let job = manifest("sweep-job.yaml");
    let broken: [Broken; 6] = [
        ("lower-case completion mode", |j| {
            j["spec"]["completionMode"] = "indexed".into()
        }),
        ("misspelt field", |j| {
            j["spec"]["parallelsim"] = 4.into();
        }),
        ("restart policy", |j| {
            j["spec"]["template"]["spec"]["restartPolicy"] = "Sometimes".into()
        }),
        ("no containers", |j| {
            j["spec"]["template"]["spec"]["containers"] = Value::Array(vec![])
        }),
        ("bad quantity", |j| {
            j["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] =
                "one".into()
        }),
        ("claim without a name", |j| {
            j["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"] =
                serde_json::json!({})
        }),
    ];
    for (what, edit) in broken {
        let mut j = job.clone();
        edit(&mut j);
        assert!(!errors(&v, &j).is_empty(), "{what} should be refused");
    }
}

/// The shell command of a Job's single container.
fn command(job: &Value) -> String {
    let c = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["command"], serde_json::json!(["sh", "-c"]));
    c["args"][0].as_str().unwrap().to_owned()
}

#[test]
fn the_indexed_job_runs_one_shard_per_index_and_the_merge_takes_them_all() {
    let job = manifest("sweep-job.yaml");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    let n = spec["completions"].as_u64().unwrap();
    assert_eq!(spec["parallelism"].as_u64(), Some(n));
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Never");
    let cmd = command(&job);
    assert!(
        cmd.contains(&format!("--shard $((JOB_COMPLETION_INDEX + 1))/{n} ")),
        "{cmd}"
    );
    let out = format!("/results/blog37/shard-$((JOB_COMPLETION_INDEX + 1))-of-{n} ");
    assert!(cmd.contains(&format!("--out {out}")), "{cmd}");
    assert!(cmd.contains("--resume"), "a retried pod must resume: {cmd}");
    let merge = command(&manifest("merge-job.yaml"));
    assert!(
        merge.contains(&format!("loadsim merge /results/blog37/shard-*-of-{n} ")),
        "{merge}"
    );

    // Each index's command, run by sh as the pod would, is a valid sweep of a distinct shard
    // (--dry-run: check and describe, run nothing).
    let dir = tempfile::tempdir().unwrap();
    let exe = env!("CARGO_BIN_EXE_loadsim");
    let mut shards = Vec::new();
    for index in 0..n {
        let script = cmd
            .replace("exec loadsim ", "exec \"$LOADSIM\" ")
            .replace("/results/", &format!("{}/", dir.path().display()))
            + " --dry-run";
        let out = Command::new("sh")
            .args(["-c", &script])
            .current_dir(repo())
            .env("LOADSIM", exe)
            .env("JOB_COMPLETION_INDEX", index.to_string())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "index {index}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let shard = format!("shard {}/{n}: ", index + 1);
        assert!(stdout.contains(&shard), "index {index}: {stdout}");
        assert!(
            stdout.contains(&format!("blog37/shard-{}-of-{n}", index + 1)),
            "{stdout}"
        );
        shards.push(stdout.into_owned());
    }
    // Together the shards hold every cell of the sweep once.
    let cells: usize = shards
        .iter()
        .map(|s| {
            let line = s.lines().find(|l| l.contains("  shard ")).unwrap();
            line.rsplit(": ")
                .next()
                .unwrap()
                .trim_end_matches(" cells")
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    let total: usize = shards[0]
        .split(": ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(cells, total);
}

#[test]
fn both_jobs_mount_the_read_write_many_claim_and_run_the_dockerfile_image() {
    let pvc = manifest("results-pvc.yaml");
    let claim = pvc["metadata"]["name"].as_str().unwrap();
    let modes = pvc["spec"]["accessModes"].as_array().unwrap();
    assert!(
        modes.iter().any(|m| m == "ReadWriteMany"),
        "shards on several nodes write to one volume: {modes:?}"
    );
    let version = env!("CARGO_PKG_VERSION");
    let image = format!("loadsim:{version}");
    let dockerfile = std::fs::read_to_string(repo().join("Dockerfile")).unwrap();
    assert!(
        dockerfile.contains(&format!("docker build -t {image} .")),
        "the Dockerfile's build line tags the image the manifests run ({image})"
    );
    for name in ["sweep-job.yaml", "merge-job.yaml"] {
        let job = manifest(name);
        let pod = &job["spec"]["template"]["spec"];
        assert_eq!(pod["containers"][0]["image"], image.as_str(), "{name}");
        assert_eq!(
            pod["volumes"][0]["persistentVolumeClaim"]["claimName"], claim,
            "{name}"
        );
        assert_eq!(
            pod["containers"][0]["volumeMounts"][0]["mountPath"], "/results",
            "{name}"
        );
    }
}
