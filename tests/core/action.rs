//! The GitHub Action (`action.yml`) and the release workflow it downloads from
//! (`.github/workflows/release.yml`), read as YAML: the install is cached under a key of the
//! runner's OS and architecture, the action's ref and its sources; the cache is restored before
//! and saved right after installing; a prebuilt binary of the ref is tried before compiling; and
//! the release builds exactly the targets, asset names and archive layout the action expects.

use std::path::Path;

use yaml_serde::Value;

fn read(path: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    yaml_serde::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("`{key}` in {v:?}"))
}

/// The action's steps, and the index of the one with `id` or `uses` prefix.
fn steps() -> Vec<Value> {
    read("action.yml")["runs"]["steps"]
        .as_sequence()
        .expect("runs.steps")
        .clone()
}

fn find(steps: &[Value], pred: impl Fn(&Value) -> bool, what: &str) -> usize {
    let found: Vec<usize> = (0..steps.len()).filter(|&i| pred(&steps[i])).collect();
    assert_eq!(found.len(), 1, "exactly one step {what}: {found:?}");
    found[0]
}

fn uses(step: &Value) -> &str {
    step.get("uses").and_then(Value::as_str).unwrap_or("")
}

fn run(step: &Value) -> &str {
    step.get("run").and_then(Value::as_str).unwrap_or("")
}

#[test]
fn the_install_is_cached_on_the_runner_and_the_ref_and_saved_before_the_tests_run() {
    let steps = steps();
    let key = find(
        &steps,
        |st| st.get("id").and_then(Value::as_str) == Some("key"),
        "key",
    );
    let restore = find(
        &steps,
        |st| uses(st).starts_with("actions/cache/restore@"),
        "restore",
    );
    let save = find(
        &steps,
        |st| uses(st).starts_with("actions/cache/save@"),
        "save",
    );
    let build = find(
        &steps,
        |st| run(st).contains("cargo install"),
        "cargo install",
    );
    let check = find(&steps, |st| run(st).contains("loadsim check"), "check");
    assert!(key < restore && restore < build && build < save && save < check);

    // The key: runner OS and architecture, the action's ref (read through env:, see
    // actions/runner#2473) and a hash of the action's sources.
    let k = &steps[key];
    assert_eq!(
        s(&k["env"], "LOADSIM_ACTION_REF"),
        "${{ github.action_ref }}"
    );
    assert!(
        run(k).contains("key=loadsim-$RUNNER_OS-$RUNNER_ARCH-$ref-$src"),
        "{}",
        run(k)
    );
    assert!(run(k).contains("LOADSIM_ACTION_REF"));
    assert!(run(k).contains("sha256sum"), "the sources' hash");

    // Restore and save the same path under the same key; save only what was not restored.
    let (r, sv) = (&steps[restore], &steps[save]);
    assert_eq!(s(&steps[restore], "id"), "cache");
    assert_eq!(s(&r["with"], "key"), "${{ steps.key.outputs.key }}");
    assert_eq!(s(&sv["with"], "key"), s(&r["with"], "key"));
    assert_eq!(s(&r["with"], "path"), "${{ steps.key.outputs.dir }}/bin");
    assert_eq!(s(&sv["with"], "path"), s(&r["with"], "path"));
    assert_eq!(s(sv, "if"), "steps.cache.outputs.cache-hit != 'true'");

    // A cache hit compiles nothing: the build runs only on a miss with no prebuilt binary, and
    // installs into the cached folder (`--root DIR` puts the binary in DIR/bin).
    let b = &steps[build];
    assert_eq!(
        s(b, "if"),
        "steps.cache.outputs.cache-hit != 'true' && steps.prebuilt.outputs.installed != 'true'"
    );
    assert_eq!(s(&b["env"], "LOADSIM_DIR"), "${{ steps.key.outputs.dir }}");
    assert!(run(b).contains("--locked") && run(b).contains("--root \"$LOADSIM_DIR\""));
    assert!(run(k).contains("echo \"$dir/bin\" >> \"$GITHUB_PATH\""));
}

#[test]
fn the_prebuilt_binary_is_the_release_asset_the_release_workflow_attaches() {
    let steps = steps();
    let pre = find(
        &steps,
        |st| st.get("id").and_then(Value::as_str) == Some("prebuilt"),
        "prebuilt",
    );
    let build = find(
        &steps,
        |st| run(st).contains("cargo install"),
        "cargo install",
    );
    let restore = find(
        &steps,
        |st| uses(st).starts_with("actions/cache/restore@"),
        "restore",
    );
    assert!(
        restore < pre && pre < build,
        "cache, then prebuilt, then compile"
    );
    let p = &steps[pre];
    assert_eq!(s(p, "if"), "steps.cache.outputs.cache-hit != 'true'");
    let script = run(p);
    assert!(script.contains(
        "https://github.com/$LOADSIM_ACTION_REPO/releases/download/$LOADSIM_ACTION_REF/$asset"
    ));
    assert!(script.contains("asset=\"loadsim-$LOADSIM_TARGET.tar.gz\""));
    assert!(script.contains("sha256sum -c \"$asset.sha256\""), "checked");
    assert!(
        script.contains("-C \"$LOADSIM_DIR/bin\" loadsim"),
        "the archive holds `loadsim`"
    );
    assert!(script.contains("echo \"installed=true\" >> \"$GITHUB_OUTPUT\""));

    // The targets the action maps runners to are exactly the release's matrix.
    let key = &steps[find(
        &steps,
        |st| st.get("id").and_then(Value::as_str) == Some("key"),
        "key",
    )];
    let mapped: Vec<&str> = run(key)
        .lines()
        .filter_map(|l| {
            l.split_once(") target=")
                .map(|(_, t)| t.trim_end_matches(" ;;").trim())
        })
        .filter(|t| !t.is_empty() && *t != ";;")
        .collect();
    let release = read(".github/workflows/release.yml");
    let matrix: Vec<&str> = release["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|m| s(m, "target"))
        .collect();
    assert_eq!(
        mapped,
        vec!["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"]
    );
    assert_eq!(matrix, mapped);
    // The release packages `loadsim` alone as loadsim-<target>.tar.gz with its .sha256, and
    // attaches both to the release of the tag.
    let build_steps = release["jobs"]["build"]["steps"].as_sequence().unwrap();
    let package = build_steps.iter().map(run).collect::<Vec<_>>().join("\n");
    assert!(package.contains("asset=\"loadsim-$TARGET.tar.gz\""));
    assert!(package.contains("tar -czf \"$asset\" -C \"target/$TARGET/release\" loadsim"));
    assert!(package.contains("sha256sum \"$asset\" > \"$asset.sha256\""));
    assert!(package.contains("gh release upload \"$TAG\" \"$ASSET\" \"$ASSET.sha256\""));
    assert!(package.contains("cargo build --release --locked --target ${{ matrix.target }}"));
    assert_eq!(
        release["on"]["push"]["tags"].as_sequence().unwrap()[0]
            .as_str()
            .unwrap(),
        "v*"
    );
}
