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
    /// A call's worst case against the time its caller serves under.
    Budget,
    /// A queue's wait against its callers' wait.
    Queue,
    /// Deadlines: `drop_expired` where no request carries a deadline.
    Deadline,
    /// Offered load × amplification against capacity.
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
    /// A note or a warning.
    pub level: Level,
    /// The check that found it.
    pub check: Check,
    /// The service or edge (`a->b`) it is about.
    pub subject: String,
    /// What is wrong, with the numbers.
    pub message: String,
    /// A suggested change, for warnings (`None` for notes).
    pub fix: Option<String>,
}
