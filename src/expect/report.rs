//! The result of `loadsim test` and its readable and JSON forms. Owns the shape every output
//! shares — files, each with its test cases (one per assertion, one for the snapshot) — so the
//! text on stdout, `--format json` and `--junit` cannot disagree on what passed.

use serde::Serialize;

/// The formats of `loadsim test` on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TestFormat {
    /// One line per case, failures' details indented, then `N passed, M failed`.
    Text,
    /// One JSON document: counts, files, cases, values per seed.
    Json,
}

/// Everything `loadsim test` found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TestReport {
    /// Cases that passed, over every file.
    pub passed: usize,
    /// Cases that failed, over every file.
    pub failed: usize,
    /// Per scenario file, in the order checked.
    pub files: Vec<FileReport>,
}

/// One scenario file's cases.
#[derive(Clone, Debug, Serialize)]
pub struct FileReport {
    /// The file as found (relative to where `loadsim test` ran, when it was given so).
    pub file: String,
    /// The scenario's name (its file stem).
    pub scenario: String,
    /// Its cases: one per assertion, and one for the snapshot.
    pub cases: Vec<CaseReport>,
    /// Wall-clock seconds of the runs this file's cases read, each run once (JUnit's `time` of
    /// the testsuite; machine-dependent, so only in `--junit`).
    #[serde(skip)]
    pub wall_s: f64,
}

/// What a case checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseKind {
    /// One `expect:` entry.
    Assertion,
    /// The comparison with the stored snapshot (`snapshot: true`).
    Snapshot,
}

/// One test case.
#[derive(Clone, Debug, Serialize)]
pub struct CaseReport {
    /// An assertion or a snapshot.
    pub kind: CaseKind,
    /// `expect[0]: metrics.recovery_s le 5 (seeds 1..20, share 0.95)` or `snapshot`.
    pub name: String,
    /// Whether the case passed.
    pub passed: bool,
    /// One line: what was observed, or what happened to the snapshot.
    pub message: String,
    /// Further lines: a snapshot's changed metrics (`metric: old → new`) and notes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
    /// For assertions: the value per seed (`null` where the metric has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<SeedValue>>,
    /// For assertions with `mean: true`: the mean and its 95 % confidence interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean: Option<MeanReport>,
    /// For snapshots: the snapshot file, and the pending `.snap.new` when one was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    /// For snapshots: the pending `<stem>.snap.new`, when one was written (`None` otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<String>,
    /// Wall-clock seconds of the runs this case read (JUnit's `time` of the testcase). Cases of
    /// one file share runs, so their times may add up to more than the file's.
    #[serde(skip)]
    pub wall_s: f64,
}

/// A metric's value on one seed.
#[derive(Clone, Debug, Serialize)]
pub struct SeedValue {
    /// The seed.
    pub seed: u64,
    /// The metric's value on it (this minus baseline when paired); `None` where undefined.
    pub value: Option<f64>,
}

/// A mean over seeds with its interval.
#[derive(Clone, Debug, Serialize)]
pub struct MeanReport {
    /// Seeds averaged.
    pub n: usize,
    /// The mean over them.
    pub mean: f64,
    /// `[low, high]`; absent for a single seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
}

impl TestReport {
    /// Adds a file's cases and counts them.
    pub fn push(&mut self, file: FileReport) {
        for c in &file.cases {
            if c.passed {
                self.passed += 1;
            } else {
                self.failed += 1;
            }
        }
        self.files.push(file);
    }

    /// The closing line: `3 passed, 1 failed`.
    pub fn summary_line(&self) -> String {
        format!("{} passed, {} failed", self.passed, self.failed)
    }

    /// One line per case (`PASS`/`FAIL`, file, name, observation), the details of failures and
    /// notes indented below, then the closing line.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for f in &self.files {
            for c in &f.cases {
                let status = if c.passed { "PASS" } else { "FAIL" };
                out.push_str(&format!(
                    "    {status} {} {}: {}\n",
                    f.file, c.name, c.message
                ));
                for d in &c.details {
                    out.push_str(&format!("           {d}\n"));
                }
            }
        }
        out.push_str(&self.summary_line());
        out.push('\n');
        out
    }

    /// The report in `format`.
    pub fn render(&self, format: TestFormat) -> String {
        match format {
            TestFormat::Text => self.to_text(),
            TestFormat::Json => self.to_json(),
        }
    }

    /// The whole result as one JSON document.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("reports serialize");
        s.push('\n');
        s
    }
}
