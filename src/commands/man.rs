//! `loadsim man`: the manual pages, generated from the command line's definition (clap_mangen),
//! so they say exactly what `--help` says. `loadsim.1` for the program and `loadsim-<command>.1`
//! for each subcommand; the repository keeps them in `docs/man/` (a test checks they are
//! current). The pages carry the package version only, so they change when the CLI does.

use std::path::{Path, PathBuf};

use crate::Error;

/// The page of the whole program (`loadsim man` on stdout).
pub fn page(cmd: clap::Command) -> Result<String, Error> {
    let mut out = Vec::new();
    clap_mangen::Man::new(versioned(cmd))
        .render(&mut out)
        .map_err(|source| Error::Output {
            what: "the manual page".into(),
            source,
        })?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Writes `loadsim.1` and one `loadsim-<command>.1` per subcommand into `dir` (created if
/// missing); returns the files written.
pub fn write_all(cmd: clap::Command, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let failed = |what: &Path, source: std::io::Error| Error::Output {
        what: what.display().to_string(),
        source,
    };
    let folder = crate::runner::OutputPlan::new(Vec::<PathBuf>::new()).folder(
        "--out",
        dir,
        &crate::runner::export::MAN,
    )?;
    let mut cmd = versioned(cmd);
    cmd.build();
    let mut written = Vec::new();
    let mut pages = vec![cmd.clone()];
    pages.extend(
        cmd.get_subcommands()
            .filter(|s| s.get_name() != "help")
            .cloned(),
    );
    for (n, page) in pages.into_iter().enumerate() {
        let name = if n == 0 {
            "loadsim".to_owned()
        } else {
            format!("loadsim-{}", page.get_name())
        };
        let page = page.display_name(name.clone());
        let file = format!("{name}.1");
        let mut out = Vec::new();
        clap_mangen::Man::new(page)
            .render(&mut out)
            .map_err(|e| failed(&dir.join(&file), e))?;
        written.push(folder.write(&file, &out)?);
    }
    Ok(written)
}

/// The command with the bare package version (a build's commit would make the pages differ
/// from one commit to the next).
fn versioned(cmd: clap::Command) -> clap::Command {
    // The title line of every page names the version; `-V` stays an option of `loadsim` alone.
    cmd.version(env!("CARGO_PKG_VERSION"))
        .long_version(env!("CARGO_PKG_VERSION"))
        .mut_subcommands(|s| {
            s.version(env!("CARGO_PKG_VERSION"))
                .disable_version_flag(true)
        })
}
