//! Which queued request a freed slot takes (`services.<name>.queue_discipline`): the oldest
//! (`fifo`), the newest (`lifo`), or — Facebook's adaptive LIFO — the oldest normally and the
//! newest while the oldest queued request has waited at least `lifo_after` (`adaptive_lifo`), so
//! that under a standing queue fresh requests, whose callers still wait, are served first — or the
//! request of the highest request-class priority, oldest first within a priority (`priority`).
//! Also owns priority shedding (`services.<name>.shed: priority`): when the queue is full, an
//! arriving request evicts the newest queued request of the lowest priority below its own, which
//! is rejected as `shed` — the arriving request takes the place a full FIFO queue would have
//! refused to the latest low-priority arrival.

use schemars::JsonSchema;
use serde::Deserialize;

use super::DurationText;
use super::Problems;
use crate::time::SimDuration;

/// The discipline without `queue_discipline`.
pub(crate) const DEFAULT_DISCIPLINE: QueueDisciplineRaw = QueueDisciplineRaw::Fifo;
/// Default wait of the oldest queued request that switches adaptive LIFO to newest-first.
pub(crate) const DEFAULT_LIFO_AFTER: SimDuration = SimDuration::from_millis(100);

/// Which queued request a freed slot takes.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum QueueDisciplineRaw {
    /// Oldest first (the default).
    Fifo,
    /// Newest first.
    Lifo,
    /// Oldest first, but newest first while the oldest queued request has waited `lifo_after`.
    AdaptiveLifo,
    /// Highest request-class priority first, oldest first within a priority.
    Priority,
}

/// `shed`: what a full queue does beyond refusing the arriving request.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ShedRaw {
    /// An arriving request evicts the newest queued request of the lowest priority below its
    /// own; that one is rejected (reason `shed`).
    Priority,
}

impl QueueDisciplineRaw {
    /// The name as written in a file.
    pub fn name(self) -> &'static str {
        match self {
            QueueDisciplineRaw::Fifo => "fifo",
            QueueDisciplineRaw::Lifo => "lifo",
            QueueDisciplineRaw::AdaptiveLifo => "adaptive_lifo",
            QueueDisciplineRaw::Priority => "priority",
        }
    }
}

/// Which queued request a freed slot takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueDiscipline {
    /// Oldest first.
    Fifo,
    /// Newest first.
    Lifo,
    /// Oldest first, but newest first while the oldest queued request has waited at least `after`
    /// (Facebook's adaptive LIFO).
    AdaptiveLifo {
        /// `lifo_after`: the oldest request's wait that switches to newest first (default
        /// 100 ms).
        after: SimDuration,
    },
    /// Highest request-class priority first, oldest first within a priority.
    Priority,
}

impl QueueDiscipline {
    /// Whether the newest queued request is served next, when the oldest has waited
    /// `oldest_waited`.
    #[inline]
    pub fn serves_newest(&self, oldest_waited: SimDuration) -> bool {
        match *self {
            QueueDiscipline::Fifo => false,
            QueueDiscipline::Lifo => true,
            QueueDiscipline::AdaptiveLifo { after } => oldest_waited >= after,
            QueueDiscipline::Priority => false,
        }
    }
}

/// Checks `queue_discipline` and `lifo_after` of the service at `key`.
pub(crate) fn validate(
    key: &str,
    discipline: Option<QueueDisciplineRaw>,
    lifo_after: Option<DurationText>,
    p: &mut impl Problems,
) -> QueueDiscipline {
    match discipline.unwrap_or(DEFAULT_DISCIPLINE) {
        QueueDisciplineRaw::Fifo | QueueDisciplineRaw::Lifo | QueueDisciplineRaw::Priority
            if lifo_after.is_some() =>
        {
            p.problem(
                &format!("{key}.lifo_after"),
                "only applies with `queue_discipline: adaptive_lifo`".into(),
            );
            QueueDiscipline::Fifo
        }
        QueueDisciplineRaw::Fifo => QueueDiscipline::Fifo,
        QueueDisciplineRaw::Lifo => QueueDiscipline::Lifo,
        QueueDisciplineRaw::Priority => QueueDiscipline::Priority,
        QueueDisciplineRaw::AdaptiveLifo => QueueDiscipline::AdaptiveLifo {
            after: lifo_after.map_or(DEFAULT_LIFO_AFTER, |d| d.0),
        },
    }
}

/// Each request class's priority lane: the rank of its priority among the distinct priorities,
/// most important first (`[10, 0, 10, 5]` → `[0, 2, 0, 1]`).
pub(crate) fn priority_lanes(priorities: &[i32]) -> Vec<u16> {
    let mut distinct: Vec<i32> = priorities.to_vec();
    distinct.sort_unstable_by(|a, b| b.cmp(a));
    distinct.dedup();
    priorities
        .iter()
        .map(|p| distinct.iter().position(|d| d == p).unwrap_or(0) as u16)
        .collect()
}

/// Checks `shed` of the service at `key`: it needs a bounded queue (`queue_cap`), else nothing is
/// ever full. Returns whether priority shedding is on.
pub(crate) fn validate_shed(
    key: &str,
    shed: Option<ShedRaw>,
    queue_cap: Option<u32>,
    p: &mut impl Problems,
) -> bool {
    match shed {
        None => false,
        Some(ShedRaw::Priority) => {
            if queue_cap.is_none() {
                p.problem(
                    &format!("{key}.shed"),
                    "sheds from a full queue, and this queue is unbounded: give `queue_cap`".into(),
                );
            }
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protections::bad_snippets::{At, accepted, check};

    #[test]
    fn bad_snippets() {
        let only = "only applies with `queue_discipline: adaptive_lifo`";
        check(
            At::Service,
            &[
                ("lifo_after: 10ms", "lifo_after", only),
                (
                    "queue_discipline: lifo\nlifo_after: 10ms",
                    "lifo_after",
                    only,
                ),
            ],
        );
        accepted(
            At::Service,
            &[
                "queue_discipline: adaptive_lifo\nlifo_after: 0s",
                "queue_discipline: fifo",
            ],
        );
    }

    #[test]
    fn the_schema_names_every_discipline_and_the_default() {
        let schema = crate::schema::scenario();
        let prop = &schema["definitions"]["ServiceRaw"]["properties"]["queue_discipline"];
        let text = prop["description"].as_str().unwrap();
        for d in [
            QueueDisciplineRaw::Fifo,
            QueueDisciplineRaw::Lifo,
            QueueDisciplineRaw::AdaptiveLifo,
            QueueDisciplineRaw::Priority,
        ] {
            assert!(text.contains(&format!("`{}`", d.name())), "{text}");
        }
        assert_eq!(prop["default"], DEFAULT_DISCIPLINE.name(), "{prop}");
    }

    #[test]
    fn priority_lanes_rank_distinct_priorities_most_important_first() {
        assert_eq!(priority_lanes(&[10, 0, 10, 5]), vec![0, 2, 0, 1]);
        assert_eq!(priority_lanes(&[0]), vec![0]);
        assert_eq!(priority_lanes(&[-1, 3]), vec![1, 0]);
    }

    #[test]
    fn adaptive_lifo_switches_at_lifo_after() {
        let d = QueueDiscipline::AdaptiveLifo {
            after: SimDuration::from_millis(100),
        };
        assert!(!d.serves_newest(SimDuration::from_millis(99)));
        assert!(d.serves_newest(SimDuration::from_millis(100)));
        assert!(QueueDiscipline::Lifo.serves_newest(SimDuration::ZERO));
        assert!(!QueueDiscipline::Fifo.serves_newest(SimDuration::from_secs(9)));
    }
}
