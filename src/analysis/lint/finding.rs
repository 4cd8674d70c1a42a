//! What the linter reports: one [`Finding`] per problem or note, its [`Level`] and the [`Check`]
//! that found it.

/// How serious a finding is. Only warnings fail `loadsim check --deny-warnings`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Worth knowing; nothing to fix.
    Note,
    /// A policy the article's rules reject; comes with a suggested fix.
    Warning,
}

/// Which check produced a finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    Budget,
    Queue,
    Deadline,
    Load,
    /// A service no user request can reach.
    Reach,
    /// Admission control (rate and concurrency limiters), [`limiter`](mod@limiter).
    Limiter,
}

impl Check {
    /// The check's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Check::Budget => "budget",
            Check::Queue => "queue",
            Check::Deadline => "deadline",
            Check::Load => "load",
            Check::Reach => "reach",
            Check::Limiter => "limiter",
        }
    }
}

/// One finding: what, where (a service or an edge name), the numbers, and a fix for warnings.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub level: Level,
    pub check: Check,
    pub subject: String,
    pub message: String,
    pub fix: Option<String>,
}
