//! Command-line conventions: `--color` against `NO_COLOR` and `CLICOLOR_FORCE`, and the manual
//! pages of `loadsim man` against the copies in `docs/man/`.

use std::path::Path;
use std::process::{Command, Output};

use super::repo;

/// `loadsim` with `args` and only the colour variables of `env` set (stderr is a pipe).
fn loadsim(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_loadsim"));
    cmd.args(args).current_dir(repo());
    for var in ["NO_COLOR", "CLICOLOR_FORCE", "CLICOLOR", "TERM"] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    cmd.output().unwrap()
}

const ESC: &str = "\x1b[";

/// `--color` (or none), the environment, whether stderr is coloured.
type Case<'a> = (Option<&'a str>, &'a [(&'a str, &'a str)], bool);

#[test]
fn color_flag_overrides_the_environment_and_auto_follows_it() {
    // A diagnostic: the file does not exist (exit 2).
    let diag = |color: Option<&str>, env: &[(&str, &str)]| {
        let mut args = vec!["check", "no-such-scenario.yaml"];
        if let Some(c) = color {
            args.extend(["--color", c]);
        }
        let out = loadsim(&args, env);
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8(out.stderr).unwrap()
    };
    let plain = diag(None, &[]);
    assert!(
        plain.contains("no-such-scenario.yaml") && !plain.contains(ESC),
        "{plain:?}"
    );
    let cases: [Case; 7] = [
        (Some("always"), &[], true),
        (Some("always"), &[("NO_COLOR", "1")], true),
        (Some("never"), &[("CLICOLOR_FORCE", "1")], false),
        (Some("auto"), &[("CLICOLOR_FORCE", "1")], true),
        (None, &[("CLICOLOR_FORCE", "1")], true),
        (None, &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")], false),
        (Some("auto"), &[], false),
    ];
    for (color, env, coloured) in cases {
        let text = diag(color, env);
        assert_eq!(
            text.contains(ESC),
            coloured,
            "--color {color:?} with {env:?}: {text:?}"
        );
        if coloured {
            assert_eq!(strip_ansi(&text), plain, "colour changes only the styles");
        }
    }
    // The flag is global: it may follow the subcommand or precede it.
    let before = loadsim(
        &["--color", "always", "check", "no-such-scenario.yaml"],
        &[],
    );
    assert!(String::from_utf8_lossy(&before.stderr).contains(ESC));
    let bad = loadsim(&["check", "x.yaml", "--color", "sometimes"], &[]);
    assert_eq!(bad.status.code(), Some(2));
}

fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(ESC) {
        out.push_str(&rest[..i]);
        let after = &rest[i + ESC.len()..];
        let end = after.find('m').expect("an SGR sequence");
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[test]
fn docs_man_holds_the_current_manual_pages() {
    let dir = tempfile::tempdir().unwrap();
    let out = loadsim(&["man", "--out", dir.path().to_str().unwrap()], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let committed = repo().join("docs/man");
    let fresh = names(dir.path());
    assert_eq!(
        names(&committed),
        fresh,
        "docs/man/ is stale: regenerate it with `cargo run -- man --out docs/man`"
    );
    for name in [
        "loadsim.1",
        "loadsim-run.1",
        "loadsim-sweep.1",
        "loadsim-man.1",
    ] {
        assert!(fresh.contains(&name.to_owned()), "{name} in {fresh:?}");
    }
    for name in &fresh {
        let now = std::fs::read_to_string(dir.path().join(name)).unwrap();
        let then = std::fs::read_to_string(committed.join(name)).unwrap();
        assert!(
            now == then,
            "docs/man/{name} is stale: regenerate it with `cargo run -- man --out docs/man`"
        );
    }
    // `loadsim man` prints the program's page; it lists the commands and the global --color.
    let page = loadsim(&["man"], &[]);
    let page = String::from_utf8(page.stdout).unwrap();
    assert_eq!(
        page,
        std::fs::read_to_string(committed.join("loadsim.1")).unwrap()
    );
    assert!(page.contains(".TH loadsim 1"), "a roff page");
    for word in ["sweep", "merge", "boundary", "\\-\\-color"] {
        assert!(page.contains(word), "{word}");
    }
}
