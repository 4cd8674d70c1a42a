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
use crate::ix::ReplicaIx;
use crate::rng::Stream;
use crate::time::SimTime;

/// Default `choice_count` of `least_request` (Envoy's default: two choices).
pub(crate) const DEFAULT_CHOICE_COUNT: u32 = 2;

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
    // The word itself; a doc comment here would turn the schema's `enum: [all]` into a `oneOf`.
    #[allow(missing_docs)]
    All,
}

/// A validated balancing policy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LoadBalancer {
    /// Each replica in turn (the default).
    #[default]
    RoundRobin,
    /// A uniform replica per attempt.
    Random,
    /// `choice_count` draws with replacement.
    LeastRequest {
        /// Replicas drawn per pick (default 2).
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
pub(crate) struct Balancer {
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
    healthy: Vec<ReplicaIx>,
}

impl Balancer {
    /// A balancer over `replicas` replicas drawing from `stream`.
    pub(crate) fn new(policy: LoadBalancer, replicas: u32, stream: Stream) -> Self {
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
    pub(crate) fn with_outlier(mut self, detector: Detector) -> Self {
        self.outlier = Some(detector);
        self
    }

    /// The edge's outlier detector, if it has one.
    pub(crate) fn outlier(&self) -> Option<&Detector> {
        self.outlier.as_ref()
    }

    /// Picks the replica for an attempt sent at `now` among `serving` (the replicas an
    /// autoscaler has serving, in increasing order, at least one; `None`: every replica), less
    /// the replicas the edge's outlier detector has ejected (all of `serving` when every one of
    /// them is ejected). The attempt then counts as outstanding there.
    #[inline]
    pub(crate) fn pick_at(&mut self, now: SimTime, serving: Option<&[ReplicaIx]>) -> ReplicaIx {
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
                Some(h) => h[self.choose_in(h.len(), |i| h[i].index())],
            }
        } else {
            let ejected = self.outlier.as_ref().map_or(&[][..], |d| d.ejected());
            let mut healthy = std::mem::take(&mut self.healthy);
            healthy.clear();
            match serving {
                None => {
                    healthy.extend(ReplicaIx::first(ejected.len()).filter(|&r| !ejected[r.index()]))
                }
                Some(h) => healthy.extend(h.iter().copied().filter(|&r| !ejected[r.index()])),
            }
            let r = match (healthy.is_empty(), serving) {
                (false, _) => healthy[self.choose_in(healthy.len(), |i| healthy[i].index())],
                (true, None) => self.choose(),
                (true, Some(h)) => h[self.choose_in(h.len(), |i| h[i].index())],
            };
            self.healthy = healthy;
            r
        };
        self.outstanding[r.index()] += 1;
        r
    }

    /// An attempt to replica `r` ended at `now` with a result (`ok`: success); the outlier
    /// detector, if any, counts it.
    #[inline]
    pub(crate) fn on_result(&mut self, now: SimTime, r: ReplicaIx, ok: bool) {
        if let Some(d) = &mut self.outlier {
            d.on_result(now, r, ok);
        }
    }

    /// Outstanding requests from this caller at replica `r`.
    #[cfg(test)]
    pub(crate) fn outstanding(&self, r: ReplicaIx) -> u32 {
        self.outstanding[r.index()]
    }

    /// An attempt to replica `r` settled.
    pub(crate) fn settled(&mut self, r: ReplicaIx) {
        self.outstanding[r.index()] -= 1;
    }

    fn uniform(&mut self, n: usize) -> usize {
        self.stream.up_to(n as u64 - 1) as usize
    }

    /// The choice rule over every replica.
    fn choose(&mut self) -> ReplicaIx {
        ReplicaIx::new(self.choose_in(self.outstanding.len(), |i| i))
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
            LoadBalancer::LeastRequestAll => self.full_scan(n, &replica),
        }
    }

    /// Envoy's full scan over `n` candidates (`unweightedHostPickFullScan`): the fewest
    /// outstanding requests, ties broken by reservoir sampling. Scanning in order, each
    /// candidate that ties the fewest seen so far makes a draw, `up_to(k)` for the `k`-th such
    /// tie after the first, and replaces the choice when it draws 0; a candidate with fewer
    /// starts over. Over a few candidates that scan is what runs; over more,
    /// [`Balancer::scan_then_draw`] gives the same choice for fewer instructions.
    #[inline]
    fn full_scan(&mut self, n: usize, replica: impl Fn(usize) -> usize) -> usize {
        /// Candidates up to which the drawing scan runs: below about this many, the second pass
        /// over the counts costs more than it saves on the draws (evidence/perf.md).
        const DRAWING_SCAN_UP_TO: usize = 16;
        if n > DRAWING_SCAN_UP_TO {
            return self.scan_then_draw(n, replica);
        }
        let load = |s: &Self, i: usize| s.outstanding[replica(i)];
        let (mut best, mut ties) = (0, 1u64);
        for i in 1..n {
            let (o, b) = (load(self, i), load(self, best));
            if o < b {
                (best, ties) = (i, 1);
            } else if o == b {
                ties += 1;
                if self.stream.up_to(ties - 1) == 0 {
                    best = i;
                }
            }
        }
        best
    }

    /// The full scan with its draws made apart from the scan of the counts: the choice and the
    /// stream's position afterwards are the drawing scan's (the tests compare them). The draws
    /// at counts above the final least can not change the choice (a later, lower count replaces
    /// it), so the stream only moves past them; the draws at the least are copied out of the
    /// generator a run at a time instead of one call each, and the choice is the last tie that
    /// drew 0. Kept out of line so that the few-candidate scan keeps a small frame.
    #[inline(never)]
    fn scan_then_draw(&mut self, n: usize, replica: impl Fn(usize) -> usize) -> usize {
        /// Draws copied out of the generator at once.
        const RUN: usize = 32;
        let outstanding = &self.outstanding;
        let load = |i: usize| outstanding[replica(i)];
        // The least count, its first candidate, the ties after it, and every draw the scan
        // makes (one per tie with the least count so far).
        let (mut least, mut first, mut last, mut draws) = (load(0), 0, 0u64, 0u64);
        for i in 1..n {
            let o = load(i);
            if o < least {
                (least, first, last) = (o, i, 0);
            } else if o == least {
                last += 1;
                draws += 1;
            }
        }
        self.stream.skip(draws - last);
        // Tie k (1-based after the first) draws `up_to(k)`, in order.
        let mut chosen = 0;
        let mut words = [0u64; RUN];
        let mut k = 1;
        while k <= last {
            let run = &mut words[..(last - k + 1).min(RUN as u64) as usize];
            self.stream.fill_words(run);
            for &w in run.iter() {
                if Stream::scale(w, k) == 0 {
                    chosen = k;
                }
                k += 1;
            }
        }
        // The candidate of tie number `chosen` at the least count.
        let mut tie = 0;
        (first..n)
            .find(|&i| {
                if load(i) != least {
                    return false;
                }
                tie += 1;
                tie > chosen
            })
            .expect("the chosen tie is among the ties")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protections::bad_snippets::{At, accepted, check};

    /// The tests name replicas by number: the balancer's typed calls, numbered.
    trait Numbered {
        fn pick(&mut self, now: SimTime, serving: Option<&[u32]>) -> u32;
        fn settle(&mut self, r: u32);
        fn result(&mut self, now: SimTime, r: u32, ok: bool);
        fn out(&self, r: u32) -> u32;
    }

    fn typed(rs: &[u32]) -> Vec<ReplicaIx> {
        rs.iter().map(|&r| ReplicaIx::new(r as usize)).collect()
    }

    impl Numbered for Balancer {
        fn pick(&mut self, now: SimTime, serving: Option<&[u32]>) -> u32 {
            let serving = serving.map(typed);
            self.pick_at(now, serving.as_deref()).index() as u32
        }
        fn settle(&mut self, r: u32) {
            self.settled(ReplicaIx::new(r as usize));
        }
        fn result(&mut self, now: SimTime, r: u32, ok: bool) {
            self.on_result(now, ReplicaIx::new(r as usize), ok);
        }
        fn out(&self, r: u32) -> u32 {
            self.outstanding(ReplicaIx::new(r as usize))
        }
    }

    fn balancer(policy: LoadBalancer, n: u32) -> Balancer {
        Balancer::new(policy, n, Stream::new(1, "lb/test"))
    }

    #[test]
    fn round_robin_takes_each_replica_in_turn_whatever_the_load() {
        let mut b = balancer(LoadBalancer::RoundRobin, 3);
        b.outstanding = vec![9, 0, 0];
        let picks: Vec<u32> = (0..7).map(|_| b.pick(SimTime::ZERO, None)).collect();
        assert_eq!(picks, [0, 1, 2, 0, 1, 2, 0]);
        assert_eq!(b.out(0), 12);
    }

    #[test]
    fn random_is_uniform_and_follows_its_own_stream() {
        let mut b = balancer(LoadBalancer::Random, 4);
        let mut counts = [0u32; 4];
        for _ in 0..40_000 {
            counts[b.pick(SimTime::ZERO, None) as usize] += 1;
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
            assert_eq!(x.pick(SimTime::ZERO, None), y.pick(SimTime::ZERO, None));
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
            let got = b.pick(SimTime::ZERO, None);
            assert_eq!(got, want);
            b.settle(got);
        }
        // Replica 0 (5 outstanding) only wins when both draws are 0: about 1/9 of picks.
        let mut zero = 0;
        for _ in 0..9_000 {
            let r = b.pick(SimTime::ZERO, None);
            b.settle(r);
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
            let r = b.pick(SimTime::ZERO, None);
            b.settle(r);
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
            let r = b.pick(SimTime::ZERO, None);
            b.settle(r);
            counts[r as usize] += 1;
        }
        assert_eq!((counts[0], counts[2]), (0, 0));
        assert!((4_700..5_300).contains(&counts[1]), "{counts:?}");
        // A unique least is always taken, and the pick counts as outstanding.
        b.outstanding = vec![3, 1, 0, 1];
        assert_eq!(b.pick(SimTime::ZERO, None), 2);
        assert_eq!(b.out(2), 1);
    }

    /// The full scan as Envoy writes it (`unweightedHostPickFullScan`), drawing at every tie:
    /// what [`Balancer::full_scan`] must pick, leaving the stream where this leaves it.
    fn reference_full_scan(b: &mut Balancer, candidates: &[u32]) -> u32 {
        let load = |b: &Balancer, i: usize| b.outstanding[candidates[i] as usize];
        let mut best = 0;
        let mut ties = 1u64;
        for i in 1..candidates.len() {
            let (o, c) = (load(b, i), load(b, best));
            if o < c {
                best = i;
                ties = 1;
            } else if o == c {
                ties += 1;
                if b.stream.up_to(ties - 1) == 0 {
                    best = i;
                }
            }
        }
        candidates[best]
    }

    /// One step of a balancer's life in the property test.
    #[derive(Clone, Debug)]
    enum Step {
        /// A pick among the serving replicas (`None`: all; else those whose bit is set, or
        /// replica 0 if none is).
        Pick(Option<u64>),
        /// The `i`-th outstanding attempt (modulo their number) settles.
        Settle(usize),
        /// An attempt to replica `r` (modulo the replicas) fails: the detector ejects it.
        Fail(u32),
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            6 => proptest::option::weighted(0.7, any::<u64>()).prop_map(Step::Pick),
            4 => any::<usize>().prop_map(Step::Settle),
            1 => any::<u32>().prop_map(Step::Fail),
        ]
    }

    proptest::proptest! {
        /// Over random picks, settles and ejections, with and without serving subsets, the full
        /// scan that skips draws picks exactly the replica of the scan that draws at every tie,
        /// and leaves its stream at the same place (the next draws agree).
        #[test]
        fn the_full_scan_picks_what_the_drawing_scan_picks_and_draws_as_much(
            replicas in 1u32..160,
            seed in 0u64..1_000,
            steps in proptest::collection::vec(step(), 1..300),
        ) {
            use crate::protections::outlier::OutlierDetection;
            use crate::time::SimDuration;
            let od = OutlierDetection {
                consecutive_failures: 1,
                interval: SimDuration::from_secs(10),
                base_ejection_time: SimDuration::from_secs(30),
                max_ejection_percent: 50,
                max_ejection_time: SimDuration::from_secs(300),
            };
            let mut b = Balancer::new(LoadBalancer::LeastRequestAll, replicas, Stream::new(seed, "lb/p"))
                .with_outlier(Detector::new(od, replicas));
            let t = SimTime::ZERO;
            let mut sent: Vec<u32> = Vec::new();
            for s in steps {
                match s {
                    Step::Pick(mask) => {
                        let serving: Option<Vec<u32>> = mask.map(|m| {
                            let v: Vec<u32> = (0..replicas).filter(|&r| m >> (r % 64) & 1 == 1).collect();
                            if v.is_empty() { vec![0] } else { v }
                        });
                        // What the drawing scan picks from a copy, with the same candidates.
                        let mut reference = b.clone();
                        if let (Some(d), Some(h)) = (&mut reference.outlier, &serving) {
                            d.set_present(h.len() as u32);
                        }
                        let ejected = reference.outlier.as_ref().unwrap().ejected().to_vec();
                        let all: Vec<u32> = serving.clone().unwrap_or_else(|| (0..replicas).collect());
                        let healthy: Vec<u32> = all.iter().copied().filter(|&r| !ejected[r as usize]).collect();
                        let want = reference_full_scan(&mut reference, if healthy.is_empty() { &all } else { &healthy });
                        let got = b.pick(t, serving.as_deref());
                        proptest::prop_assert_eq!(got, want);
                        proptest::prop_assert_eq!(b.stream.word_pos(), reference.stream.word_pos());
                        proptest::prop_assert_eq!(b.stream.up_to(u64::MAX), reference.stream.up_to(u64::MAX));
                        sent.push(got);
                    }
                    Step::Settle(i) if !sent.is_empty() => {
                        let r = sent.swap_remove(i % sent.len());
                        b.settle(r);
                    }
                    Step::Settle(_) => {}
                    Step::Fail(r) => b.result(t, r % replicas, false),
                }
            }
        }
    }

    /// Counts for a full scan whose drawing scan makes `above` draws at counts above the least
    /// (ties of higher counts, before the first candidate at the least) and then `last` draws at
    /// the least, with candidates at higher counts mixed in after the first at the least (they
    /// make no draw). `noise` chooses the levels and where the higher counts go.
    fn counts_with_draws(above: usize, last: usize, noise: &mut Stream) -> Vec<u32> {
        let least = 1 + noise.up_to(2) as u32;
        // Above the least: levels going down; a step down starts over (no draw), every repeat
        // of the lowest level so far is one draw. Starting this high leaves room for every step.
        let mut level = least + 1 + above as u32;
        let mut counts = vec![level];
        for _ in 0..above {
            if level > least + 1 && noise.up_to(2) == 0 {
                level -= 1;
                counts.push(level);
            }
            counts.push(level);
        }
        counts.push(least);
        for _ in 0..last {
            while noise.up_to(3) == 0 {
                counts.push(least + 1 + noise.up_to(5) as u32);
            }
            counts.push(least);
        }
        if noise.up_to(1) == 0 {
            counts.push(least + 1);
        }
        counts
    }

    /// Checks that a pick by `b` among `serving` (a full scan, by whichever path its number of
    /// candidates takes) and [`Balancer::scan_then_draw`] over the same candidates, whatever
    /// their number, both pick what the drawing scan picks and leave their streams where it
    /// leaves its own (the next draw agrees).
    fn assert_scans_agree(b: &Balancer, serving: Option<&[u32]>, case: &str) {
        let all: Vec<u32> = serving.map_or_else(
            || (0..b.outstanding.len() as u32).collect(),
            <[u32]>::to_vec,
        );
        let mut reference = b.clone();
        let want = reference_full_scan(&mut reference, &all);
        let next = reference.stream.clone().up_to(u64::MAX);
        let mut picked = b.clone();
        let mut apart = b.clone();
        let got = [
            picked.pick(SimTime::ZERO, serving),
            all[apart.scan_then_draw(all.len(), |i| all[i] as usize)],
        ];
        for (got, after) in got.into_iter().zip([picked, apart]) {
            assert_eq!(got, want, "{case}");
            assert_eq!(
                after.stream.word_pos(),
                reference.stream.word_pos(),
                "{case}"
            );
            assert_eq!(after.stream.clone().up_to(u64::MAX), next, "{case}");
        }
    }

    #[test]
    fn the_full_scan_agrees_with_the_drawing_scan_around_the_run_boundaries() {
        // Ties at the least after the first: none, one, two, and around one and two runs of
        // draws copied at once (32); draws above the least: none, a few, and around a buffer's
        // worth (32: drawn and dropped up to there, sought past beyond). The stream starts
        // anywhere in the generator's 32-draw buffer.
        let mut noise = Stream::new(3, "lb/noise");
        for last in [0, 1, 2, 31, 32, 33, 63, 64, 65, 97] {
            for above in [0, 1, 2, 31, 32, 33, 70] {
                for seed in 0..40u64 {
                    let counts = counts_with_draws(above, last, &mut noise);
                    let n = counts.len() as u32;
                    let mut b =
                        Balancer::new(LoadBalancer::LeastRequestAll, n, Stream::new(seed, "lb/t"));
                    for _ in 0..seed % 37 {
                        b.stream.up_to(u64::MAX);
                    }
                    b.outstanding = counts.clone();
                    let case = format!("last {last}, above {above}, seed {seed}: {counts:?}");
                    // The case makes the draws it is meant to make.
                    let mut reference = b.clone();
                    let start = reference.stream.word_pos();
                    reference_full_scan(&mut reference, &(0..n).collect::<Vec<_>>());
                    let made = reference.stream.word_pos() - start;
                    assert_eq!(made, 2 * (above + last) as u128, "{case}");
                    assert_scans_agree(&b, None, &case);
                    // The same counts on serving replicas among others that carry none, which
                    // would be the least if the scan looked at them.
                    let mut wide = Balancer::new(
                        LoadBalancer::LeastRequestAll,
                        2 * n + 1,
                        Stream::new(seed, "lb/t"),
                    );
                    wide.stream = b.stream.clone();
                    let serving: Vec<u32> = (0..n).map(|i| 2 * i + 1).collect();
                    for (&r, &c) in serving.iter().zip(&counts) {
                        wide.outstanding[r as usize] = c;
                    }
                    assert_scans_agree(&wide, Some(&serving), &case);
                }
            }
        }
    }

    #[test]
    fn the_full_scan_agrees_with_the_drawing_scan_on_random_counts() {
        // Few distinct counts make long runs of ties at every level, on up to 200 replicas.
        let mut noise = Stream::new(5, "lb/noise");
        for case in 0..20_000 {
            let n = 1 + noise.up_to(199) as u32;
            let levels = 1 + noise.up_to(4);
            let mut b = Balancer::new(LoadBalancer::LeastRequestAll, n, Stream::new(case, "lb/r"));
            for _ in 0..noise.up_to(40) {
                b.stream.up_to(u64::MAX);
            }
            for o in &mut b.outstanding {
                *o = noise.up_to(levels - 1) as u32;
            }
            assert_scans_agree(&b, None, &format!("case {case}: {:?}", b.outstanding));
        }
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
        b.result(t, 1, false);
        // Serving 1 and 3, 1 ejected: every pick is 3.
        let picks: Vec<u32> = (0..3).map(|_| b.pick(t, Some(&[1, 3]))).collect();
        assert_eq!(picks, [3, 3, 3]);
        // Every serving replica ejected: round robin over the serving ones again.
        b.result(t, 3, false);
        let picks: Vec<u32> = (0..2).map(|_| b.pick(t, Some(&[1, 3]))).collect();
        assert_eq!(picks, [3, 1]);
        // Over all replicas: 0 and 2 only.
        let picks: Vec<u32> = (0..2).map(|_| b.pick(t, None)).collect();
        assert_eq!(picks, [2, 0]);
    }

    #[test]
    fn picking_among_serving_replicas_skips_the_others_and_matches_pick_over_all() {
        // Round robin over replicas 1 and 3 of 4: 1, 3, 1, …
        let mut b = balancer(LoadBalancer::RoundRobin, 4);
        let picks: Vec<u32> = (0..3)
            .map(|_| b.pick(SimTime::ZERO, Some(&[1, 3])))
            .collect();
        assert_eq!(picks, [1, 3, 1]);
        // Full scan: replica 0 is the least loaded but not serving; 2 has fewer than 1.
        let mut b = balancer(LoadBalancer::LeastRequestAll, 3);
        b.pick(SimTime::ZERO, Some(&[0]));
        b.pick(SimTime::ZERO, Some(&[0]));
        b.pick(SimTime::ZERO, Some(&[1]));
        assert_eq!(b.pick(SimTime::ZERO, Some(&[1, 2])), 2);
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
                    x.pick(SimTime::ZERO, None),
                    y.pick(SimTime::ZERO, Some(&all)),
                );
                assert_eq!(a, b, "{policy:?} pick {k}");
                if k % 3 == 0 {
                    x.settle(a);
                    y.settle(b);
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
