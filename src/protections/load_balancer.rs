//! Load balancing over a service's replicas (`services.<caller>.calls.<callee>.load_balancer`,
//! `client.load_balancer`). Owns the YAML form, its validation, and the choice rule each caller
//! applies to every attempt it sends to a replicated service (first tries, retries and hedges
//! alike: each attempt is a fresh pick, so a retry may land on the replica that just failed, as in
//! Envoy, whose retry host predicates are off by default).
//!
//! Policies, following Envoy's load balancers with equal host weights
//! (envoyproxy/envoy `source/extensions/load_balancing_policies/least_request/least_request_lb.cc`,
//! `source/extensions/load_balancing_policies/common/load_balancer_impl.cc` and
//! `api/envoy/extensions/load_balancing_policies/least_request/v3/least_request.proto`):
//! - `round_robin` (default): replicas 0, 1, …, N−1, 0, … in turn, per caller, starting at 0.
//! - `random`: a uniform replica, from the caller's own stream `lb/<edge>` (`lb/client`).
//! - `least_request` with `choice_count: k` (default 2): `k` uniform draws *with replacement*; the
//!   first draw is the candidate and a later draw replaces it only with strictly fewer outstanding
//!   requests (Envoy's `unweightedHostPickNChoices`: ties keep the earlier draw).
//! - `least_request` with `choice_count: all`: a full scan (Envoy's `FULL_SCAN` selection method):
//!   the replica with the fewest outstanding requests, ties broken uniformly at random by
//!   reservoir sampling (each later tie replaces the candidate with probability 1/ties).
//!
//! Outstanding requests are counted per caller (per edge, or the client), as an Envoy host's
//! `rq_active` is per proxy: an attempt counts from the moment it is sent until it is settled
//! (reply, timeout, or abandoned by its job).

use schemars::JsonSchema;
use serde::Deserialize;

use super::Problems;
use super::outlier::Detector;
use crate::rng::Stream;
use crate::time::SimTime;

/// Default `choice_count` of `least_request` (Envoy's default: two choices).
pub const DEFAULT_CHOICE_COUNT: u32 = 2;

/// How a caller picks a replica of a replicated callee.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadBalancerRaw {
    /// `round_robin` (default), `random` or `least_request`.
    pub policy: PolicyRaw,
    /// `least_request`: replicas drawn per pick (with replacement), or `all` for a full scan of
    /// the fewest outstanding.
    #[schemars(extend("default" = DEFAULT_CHOICE_COUNT))]
    pub choice_count: Option<ChoiceCountRaw>,
}

/// The balancing policies.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PolicyRaw {
    /// Each replica in turn.
    RoundRobin,
    /// A uniform replica per attempt.
    Random,
    /// The fewest outstanding requests among `choice_count` random draws (or all replicas).
    LeastRequest,
}

/// `choice_count`: a number of draws, or `all`.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(untagged)]
pub enum ChoiceCountRaw {
    /// Draws per pick.
    Count(u32),
    /// Every replica (full scan).
    All(AllRaw),
}

/// The word `all`.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AllRaw {
    All,
}

/// A validated balancing policy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LoadBalancer {
    #[default]
    RoundRobin,
    Random,
    /// `choice_count` draws with replacement.
    LeastRequest {
        choice_count: u32,
    },
    /// Full scan.
    LeastRequestAll,
}

impl LoadBalancer {
    /// The draws per pick of a `least_request` policy with a number, for the check against the
    /// callee's replicas.
    pub fn choice_count(&self) -> Option<u32> {
        match *self {
            LoadBalancer::LeastRequest { choice_count } => Some(choice_count),
            _ => None,
        }
    }
}

/// Checks `load_balancer` at `key` (the check of `choice_count` against the callee's replicas is
/// [`check_choice_count`], once every service is known).
pub(crate) fn validate(
    key: &str,
    raw: Option<&LoadBalancerRaw>,
    p: &mut impl Problems,
) -> LoadBalancer {
    let Some(raw) = raw else {
        return LoadBalancer::RoundRobin;
    };
    match (raw.policy, raw.choice_count) {
        (PolicyRaw::RoundRobin | PolicyRaw::Random, Some(_)) => {
            p.problem(
                &format!("{key}.choice_count"),
                "applies to `policy: least_request` only; remove it".into(),
            );
            LoadBalancer::RoundRobin
        }
        (PolicyRaw::RoundRobin, None) => LoadBalancer::RoundRobin,
        (PolicyRaw::Random, None) => LoadBalancer::Random,
        (PolicyRaw::LeastRequest, Some(ChoiceCountRaw::All(_))) => LoadBalancer::LeastRequestAll,
        (PolicyRaw::LeastRequest, Some(ChoiceCountRaw::Count(0))) => {
            p.problem(
                &format!("{key}.choice_count"),
                "must be at least 1 (or `all`)".into(),
            );
            LoadBalancer::RoundRobin
        }
        (PolicyRaw::LeastRequest, c) => LoadBalancer::LeastRequest {
            choice_count: match c {
                Some(ChoiceCountRaw::Count(n)) => n,
                _ => DEFAULT_CHOICE_COUNT,
            },
        },
    }
}

/// Refuses a `choice_count` above the callee's `replicas` (draws beyond the replica count only
/// repeat replicas; say `all` for a full scan). A default `choice_count` of 2 against one replica
/// is fine: there is nothing to choose.
pub(crate) fn check_choice_count(
    key: &str,
    lb: LoadBalancer,
    explicit: bool,
    replicas: u32,
    p: &mut impl Problems,
) {
    if let Some(k) = lb.choice_count()
        && explicit
        && k > replicas
    {
        p.problem(
            &format!("{key}.choice_count"),
            format!(
                "is {k}, more than the callee's {replicas} replicas; use at most {replicas}, or \
                 `all` for a full scan"
            ),
        );
    }
}

/// One caller's balancer toward one replicated callee: the policy's state and the caller's
/// outstanding requests per replica.
#[derive(Clone, Debug)]
pub struct Balancer {
    policy: LoadBalancer,
    /// Round robin: the pick counter (the next replica is this modulo the replicas to choose
    /// from, as Envoy's `rr_index_`).
    next: u64,
    /// Outstanding requests from this caller, per replica.
    outstanding: Vec<u32>,
    stream: Stream,
    /// The edge's outlier detector: ejected replicas are left out of the choice.
    outlier: Option<Detector>,
    /// While some replicas are ejected: the others, to choose among (a reused buffer).
    healthy: Vec<u32>,
}

impl Balancer {
    /// A balancer over `replicas` replicas drawing from `stream`.
    pub fn new(policy: LoadBalancer, replicas: u32, stream: Stream) -> Self {
        Balancer {
            policy,
            next: 0,
            outstanding: vec![0; replicas as usize],
            stream,
            outlier: None,
            healthy: Vec::new(),
        }
    }

    /// The same balancer, leaving out the replicas `detector` ejects.
    pub fn with_outlier(mut self, detector: Detector) -> Self {
        self.outlier = Some(detector);
        self
    }

    /// The edge's outlier detector, if it has one.
    pub fn outlier(&self) -> Option<&Detector> {
        self.outlier.as_ref()
    }

    /// Picks the replica for an attempt sent at `now` among `serving` (the replicas an
    /// autoscaler has serving, in increasing order, at least one; `None`: every replica), less
    /// the replicas the edge's outlier detector has ejected (all of `serving` when every one of
    /// them is ejected). The attempt then counts as outstanding there.
    #[inline]
    pub fn pick_at(&mut self, now: SimTime, serving: Option<&[u32]>) -> u32 {
        let ejecting = match &mut self.outlier {
            None => false,
            Some(d) => {
                d.advance(now);
                if let Some(h) = serving {
                    d.set_present(h.len() as u32);
                }
                d.any_ejected()
            }
        };
        let r = if !ejecting {
            match serving {
                None => self.choose(),
                Some(h) => h[self.choose_in(h.len(), |i| h[i] as usize)],
            }
        } else {
            let ejected = self.outlier.as_ref().map_or(&[][..], |d| d.ejected());
            let mut healthy = std::mem::take(&mut self.healthy);
            healthy.clear();
            match serving {
                None => healthy.extend((0..ejected.len() as u32).filter(|&r| !ejected[r as usize])),
                Some(h) => healthy.extend(h.iter().copied().filter(|&r| !ejected[r as usize])),
            }
            let r = match (healthy.is_empty(), serving) {
                (false, _) => healthy[self.choose_in(healthy.len(), |i| healthy[i] as usize)],
                (true, None) => self.choose(),
                (true, Some(h)) => h[self.choose_in(h.len(), |i| h[i] as usize)],
            };
            self.healthy = healthy;
            r
        };
        self.outstanding[r as usize] += 1;
        r
    }

    /// An attempt to replica `r` ended at `now` with a result (`ok`: success); the outlier
    /// detector, if any, counts it.
    #[inline]
    pub fn on_result(&mut self, now: SimTime, r: u32, ok: bool) {
        if let Some(d) = &mut self.outlier {
            d.on_result(now, r, ok);
        }
    }

    /// Outstanding requests from this caller at replica `r`.
    pub fn outstanding(&self, r: u32) -> u32 {
        self.outstanding[r as usize]
    }

    /// An attempt to replica `r` settled.
    pub fn settled(&mut self, r: u32) {
        self.outstanding[r as usize] -= 1;
    }

    fn uniform(&mut self, n: usize) -> usize {
        self.stream.up_to(n as u64 - 1) as usize
    }

    /// The choice rule over every replica.
    fn choose(&mut self) -> u32 {
        self.choose_in(self.outstanding.len(), |i| i) as u32
    }

    /// The choice rule over `n` candidates, candidate `i` being replica `replica(i)`; returns
    /// the chosen candidate's position.
    fn choose_in(&mut self, n: usize, replica: impl Fn(usize) -> usize) -> usize {
        let load = |s: &Self, i: usize| s.outstanding[replica(i)];
        match self.policy {
            LoadBalancer::RoundRobin => {
                let i = (self.next % n as u64) as usize;
                self.next += 1;
                i
            }
            LoadBalancer::Random => self.uniform(n),
            LoadBalancer::LeastRequest { choice_count } => {
                let mut best = self.uniform(n);
                for _ in 1..choice_count {
                    let i = self.uniform(n);
                    if load(self, i) < load(self, best) {
                        best = i;
                    }
                }
                best
            }
            LoadBalancer::LeastRequestAll => {
                let mut best = 0;
                let mut ties = 1usize;
                for i in 1..n {
                    let (o, b) = (load(self, i), load(self, best));
                    if o < b {
                        best = i;
                        ties = 1;
                    } else if o == b {
                        ties += 1;
                        if self.uniform(ties) == 0 {
                            best = i;
                        }
                    }
                }
                best
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protections::bad_snippets::{At, accepted, check};

    fn balancer(policy: LoadBalancer, n: u32) -> Balancer {
        Balancer::new(policy, n, Stream::new(1, "lb/test"))
    }

    #[test]
    fn round_robin_takes_each_replica_in_turn_whatever_the_load() {
        let mut b = balancer(LoadBalancer::RoundRobin, 3);
        b.outstanding = vec![9, 0, 0];
        let picks: Vec<u32> = (0..7).map(|_| b.pick_at(SimTime::ZERO, None)).collect();
        assert_eq!(picks, [0, 1, 2, 0, 1, 2, 0]);
        assert_eq!(b.outstanding(0), 12);
    }

    #[test]
    fn random_is_uniform_and_follows_its_own_stream() {
        let mut b = balancer(LoadBalancer::Random, 4);
        let mut counts = [0u32; 4];
        for _ in 0..40_000 {
            counts[b.pick_at(SimTime::ZERO, None) as usize] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
        // The same stream gives the same picks.
        let (mut x, mut y) = (
            balancer(LoadBalancer::Random, 5),
            balancer(LoadBalancer::Random, 5),
        );
        for _ in 0..100 {
            assert_eq!(
                x.pick_at(SimTime::ZERO, None),
                y.pick_at(SimTime::ZERO, None)
            );
        }
    }

    #[test]
    fn two_choices_take_the_fewer_outstanding_and_keep_the_first_draw_on_ties() {
        // Replay the draws to know what Envoy's rule must pick.
        let mut b = balancer(LoadBalancer::LeastRequest { choice_count: 2 }, 3);
        b.outstanding = vec![5, 0, 2];
        let mut shadow = Stream::new(1, "lb/test");
        for _ in 0..200 {
            let first = shadow.up_to(2) as u32;
            let second = shadow.up_to(2) as u32;
            let o = b.outstanding.clone();
            let want = if o[second as usize] < o[first as usize] {
                second
            } else {
                first
            };
            let got = b.pick_at(SimTime::ZERO, None);
            assert_eq!(got, want);
            b.settled(got);
        }
        // Replica 0 (5 outstanding) only wins when both draws are 0: about 1/9 of picks.
        let mut zero = 0;
        for _ in 0..9_000 {
            let r = b.pick_at(SimTime::ZERO, None);
            b.settled(r);
            zero += (r == 0) as u32;
        }
        assert!((800..1_200).contains(&zero), "{zero}");
    }

    #[test]
    fn one_choice_is_random_and_many_choices_find_the_least_loaded() {
        let mut b = balancer(LoadBalancer::LeastRequest { choice_count: 3 }, 3);
        b.outstanding = vec![1, 1, 0];
        // With three draws out of three, replica 2 is missed with probability (2/3)^3 ≈ 0.30.
        let mut two = 0;
        for _ in 0..10_000 {
            let r = b.pick_at(SimTime::ZERO, None);
            b.settled(r);
            two += (r == 2) as u32;
        }
        assert!((6_700..7_300).contains(&two), "{two}");
    }

    #[test]
    fn full_scan_takes_the_least_outstanding_and_splits_ties_evenly() {
        let mut b = balancer(LoadBalancer::LeastRequestAll, 4);
        b.outstanding = vec![3, 1, 2, 1];
        let mut counts = [0u32; 4];
        for _ in 0..10_000 {
            let r = b.pick_at(SimTime::ZERO, None);
            b.settled(r);
            counts[r as usize] += 1;
        }
        assert_eq!((counts[0], counts[2]), (0, 0));
        assert!((4_700..5_300).contains(&counts[1]), "{counts:?}");
        // A unique least is always taken, and the pick counts as outstanding.
        b.outstanding = vec![3, 1, 0, 1];
        assert_eq!(b.pick_at(SimTime::ZERO, None), 2);
        assert_eq!(b.outstanding(2), 1);
    }

    #[test]
    fn an_ejected_replica_is_left_out_of_the_serving_ones_unless_all_are_ejected() {
        use crate::protections::outlier::OutlierDetection;
        use crate::time::SimDuration;
        let od = OutlierDetection {
            consecutive_failures: 1,
            interval: SimDuration::from_secs(10),
            base_ejection_time: SimDuration::from_secs(30),
            max_ejection_percent: 100,
            max_ejection_time: SimDuration::from_secs(300),
        };
        let mut b = balancer(LoadBalancer::RoundRobin, 4).with_outlier(Detector::new(od, 4));
        let t = SimTime::ZERO;
        b.on_result(t, 1, false);
        // Serving 1 and 3, 1 ejected: every pick is 3.
        let picks: Vec<u32> = (0..3).map(|_| b.pick_at(t, Some(&[1, 3]))).collect();
        assert_eq!(picks, [3, 3, 3]);
        // Every serving replica ejected: round robin over the serving ones again.
        b.on_result(t, 3, false);
        let picks: Vec<u32> = (0..2).map(|_| b.pick_at(t, Some(&[1, 3]))).collect();
        assert_eq!(picks, [3, 1]);
        // Over all replicas: 0 and 2 only.
        let picks: Vec<u32> = (0..2).map(|_| b.pick_at(t, None)).collect();
        assert_eq!(picks, [2, 0]);
    }

    #[test]
    fn picking_among_serving_replicas_skips_the_others_and_matches_pick_over_all() {
        // Round robin over replicas 1 and 3 of 4: 1, 3, 1, …
        let mut b = balancer(LoadBalancer::RoundRobin, 4);
        let picks: Vec<u32> = (0..3)
            .map(|_| b.pick_at(SimTime::ZERO, Some(&[1, 3])))
            .collect();
        assert_eq!(picks, [1, 3, 1]);
        // Full scan: replica 0 is the least loaded but not serving; 2 has fewer than 1.
        let mut b = balancer(LoadBalancer::LeastRequestAll, 3);
        b.pick_at(SimTime::ZERO, Some(&[0]));
        b.pick_at(SimTime::ZERO, Some(&[0]));
        b.pick_at(SimTime::ZERO, Some(&[1]));
        assert_eq!(b.pick_at(SimTime::ZERO, Some(&[1, 2])), 2);
        // Over every replica, the same draws and picks as `pick`.
        for policy in [
            LoadBalancer::RoundRobin,
            LoadBalancer::Random,
            LoadBalancer::LeastRequest { choice_count: 2 },
            LoadBalancer::LeastRequestAll,
        ] {
            let (mut x, mut y) = (balancer(policy, 5), balancer(policy, 5));
            let all = [0, 1, 2, 3, 4];
            for k in 0..200 {
                let (a, b) = (
                    x.pick_at(SimTime::ZERO, None),
                    y.pick_at(SimTime::ZERO, Some(&all)),
                );
                assert_eq!(a, b, "{policy:?} pick {k}");
                if k % 3 == 0 {
                    x.settled(a);
                    y.settled(b);
                }
            }
        }
    }

    #[test]
    fn bad_snippets() {
        check(
            At::Edge,
            &[
                (
                    "load_balancer: {policy: round_robin, choice_count: 2}",
                    "load_balancer.choice_count",
                    "applies to `policy: least_request` only; remove it",
                ),
                (
                    "load_balancer: {policy: least_request, choice_count: 0}",
                    "load_balancer.choice_count",
                    "must be at least 1 (or `all`)",
                ),
                (
                    "load_balancer: {policy: least_request, choice_count: 3}",
                    "load_balancer.choice_count",
                    "is 3, more than the callee's 1 replicas; use at most 1, or `all` for a full \
                     scan",
                ),
            ],
        );
        accepted(
            At::Edge,
            &[
                "load_balancer: {policy: least_request}",
                "load_balancer: {policy: least_request, choice_count: all}",
                "load_balancer: {policy: random}",
            ],
        );
        accepted(At::Client, &["load_balancer: {policy: least_request}"]);
        // `replicas` and `latency` sit beside the balancer: the service and the edge.
        check(
            At::Service,
            &[
                (
                    "replicas: 0",
                    "replicas",
                    "must be at least 1; remove it for one replica",
                ),
                ("replicas: 10001", "replicas", "must be at most 10000"),
            ],
        );
        check(
            At::Edge,
            &[(
                "latency: {dist: constant}",
                "latency",
                "`constant` needs `value` (it takes `value`)",
            )],
        );
        accepted(At::Service, &["replicas: 3", "replicas: 1"]);
        accepted(At::Edge, &["latency: {dist: constant, value: 30ms}"]);
    }
}
