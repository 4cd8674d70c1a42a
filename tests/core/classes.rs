//! Request classes (issue 14): `clients:` with per-class metrics that add up to the totals, the
//! shorthand as the class `default`, priority queues and priority shedding against a case computed
//! by hand, and the effect of priority on the article's chain over several seeds.

use std::path::PathBuf;

use loadsim::metrics::{RunMetrics, RunSummary};
use loadsim::scenario::Scenario;

use crate::common::{SEEDS, run};

/// Writes `files` (name, text) into a fresh folder and runs its `s.yaml`.
fn run_files(tag: &str, files: &[(&str, &str)]) -> RunSummary {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("loadsim-classes-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let sc = Scenario::load(&dir.join("s.yaml"), &[], None).unwrap_or_else(|e| panic!("{e}"));
    let out = loadsim::model::run(&sc).unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// One service (one slot, a queue of two, 100 ms of work each) and two classes replayed from a
/// trace with a class column, retries off.
fn one_service(service_extra: &str) -> String {
    format!(
        "duration: 1s
clients:
  lo:
    priority: sheddable
    arrivals: {{trace: t.csv}}
    entry: svc
    attempt_timeout: 10s
  hi:
    priority: critical
    arrivals: {{trace: t.csv}}
    entry: svc
    attempt_timeout: 10s
services:
  svc:
    slots: 1
    queue_cap: 2
    service_time: {{dist: constant, value: 100ms}}
{service_extra}"
    )
}

const TRACE: &str = "time,class\n0.00,lo\n0.01,lo\n0.02,lo\n0.03,hi\n0.04,lo\n0.05,hi\n0.06,hi\n";

fn class<'a>(r: &'a RunSummary, name: &str) -> &'a RunMetrics {
    r.classes
        .get(name)
        .unwrap_or_else(|| panic!("no class {name}"))
}

#[test]
fn priority_shedding_evicts_the_newest_lower_priority_request_computed_by_hand() {
    // lo@0 takes the slot until 0.1; lo@.01 and lo@.02 fill the queue. hi@.03 evicts lo@.02
    // (the newest of the lowest lane below it); lo@.04 finds the queue full with nothing below
    // it: rejected; hi@.05 evicts lo@.01; hi@.06 finds only its own priority queued: rejected.
    // At 0.1 and 0.2 the slot takes hi@.03 then hi@.05.
    let yaml = one_service("    queue_discipline: priority\n    shed: priority\n");
    let r = run_files("shed", &[("s.yaml", &yaml), ("t.csv", TRACE)]);
    let (lo, hi) = (class(&r, "lo"), class(&r, "hi"));
    assert_eq!((lo.requests, lo.succeeded, lo.failed), (4, 1, 3));
    assert_eq!((hi.requests, hi.succeeded, hi.failed), (3, 2, 1));
    let svc = &r.services["svc"];
    assert_eq!(svc.counts.shed, Some(2), "two low-priority requests shed");
    assert_eq!(svc.counts.rejected_full, 2);
    assert_eq!(svc.counts.completed, 3);
    // hi@.03 waited for the slot until 0.1 and finished at 0.2: 170 ms (histogram: ≤ 0.1 % more).
    let p50 = hi.success_latency_p50_s.unwrap();
    assert!((0.17..0.1702).contains(&p50), "{p50}");
}

#[test]
fn without_shedding_a_full_queue_turns_away_every_class_alike() {
    // FIFO, no shedding: lo@0 runs, lo@.01 and lo@.02 queue, every later arrival is rejected.
    let r = run_files("fifo", &[("s.yaml", &one_service("")), ("t.csv", TRACE)]);
    let (lo, hi) = (class(&r, "lo"), class(&r, "hi"));
    assert_eq!((lo.requests, lo.succeeded), (4, 3));
    assert_eq!((hi.requests, hi.succeeded), (3, 0));
    assert_eq!(
        r.services["svc"].counts.shed, None,
        "no `shed` without shed"
    );
    assert_eq!(r.services["svc"].counts.rejected_full, 4);
}

#[test]
fn a_priority_queue_serves_the_higher_class_first_and_fifo_within_it() {
    // No shedding, a queue of 10: lo@.01, lo@.02, hi@.03, lo@.04, hi@.05, hi@.06 all queue
    // behind lo@0. A priority queue serves hi@.03, hi@.05, hi@.06 first (ending 0.2, 0.3, 0.4),
    // then lo@.01 …: the last hi ends at 0.4, 340 ms after it arrived; FIFO serves it last
    // (0.7, 640 ms).
    let yaml = |d: &str| one_service(d).replace("queue_cap: 2", "queue_cap: 10");
    let prio = run_files(
        "prio",
        &[
            ("s.yaml", &yaml("    queue_discipline: priority\n")),
            ("t.csv", TRACE),
        ],
    );
    let fifo = run_files("fifo10", &[("s.yaml", &yaml("")), ("t.csv", TRACE)]);
    let worst = |r: &RunSummary| class(r, "hi").success_latency_p99_s.unwrap();
    assert!((0.34..0.3404).contains(&worst(&prio)), "{}", worst(&prio));
    assert!((0.64..0.6407).contains(&worst(&fifo)), "{}", worst(&fifo));
    assert_eq!(
        class(&prio, "lo").succeeded + class(&prio, "hi").succeeded,
        7
    );
}

#[test]
fn per_class_metrics_add_up_to_the_totals() {
    for name in ["workload/classes_fifo", "workload/classes_priority"] {
        for seed in SEEDS {
            let r = run(name, &[], seed);
            assert_eq!(r.classes.len(), 2, "{name}");
            let sum = |f: fn(&RunMetrics) -> u64| r.classes.values().map(f).sum::<u64>();
            let m = &r.metrics;
            assert_eq!(sum(|c| c.requests), m.requests, "{name} {seed}");
            assert_eq!(sum(|c| c.succeeded), m.succeeded, "{name} {seed}");
            assert_eq!(sum(|c| c.failed), m.failed, "{name} {seed}");
            assert_eq!(sum(|c| c.unfinished), m.unfinished, "{name} {seed}");
            assert_eq!(
                sum(|c| c.requests_during_fault),
                m.requests_during_fault,
                "{name} {seed}"
            );
        }
    }
}

#[test]
fn clients_with_one_class_named_default_is_the_shorthand() {
    let shorthand = "duration: 20s
arrivals: {rate: 300}
client: {entry: a, attempt_timeout: 1s, retries: 2, retry_interval: 50ms}
services:
  a: {slots: 8, service_time: {dist: exponential, mean: 20ms}}
faults:
  slow: {kind: slow, service: a, from: 5s, duration: 5s, service_time: {dist: exponential, mean: 60ms}}
";
    let classes = shorthand.replace(
        "arrivals: {rate: 300}\nclient: {",
        "clients:\n  default: {arrivals: {rate: 300}, ",
    );
    assert!(classes.contains("clients:"), "{classes}");
    let a = crate::common::run_text(shorthand);
    let b = crate::common::run_text(&classes);
    assert_eq!(a.metrics, b.metrics);
    assert_eq!(a.services, b.services);
    assert!(
        b.classes.is_empty(),
        "one class reports only the totals, like the shorthand"
    );
}

#[test]
fn priority_at_the_services_protects_checkout_on_the_article_chain() {
    // Measured (seed 7): checkout's in-window success 0.08 FIFO → 0.34 with priority; browse pays.
    for seed in SEEDS {
        let fifo = run("workload/classes_fifo", &[], seed);
        let prio = run("workload/classes_priority", &[], seed);
        let during = |r: &RunSummary, c: &str| class(r, c).success_rate_during.unwrap();
        assert!(
            during(&prio, "checkout") > during(&fifo, "checkout") + 0.15,
            "seed {seed}: checkout {} → {}",
            during(&fifo, "checkout"),
            during(&prio, "checkout")
        );
        assert!(
            during(&prio, "browse") < during(&fifo, "browse"),
            "seed {seed}: browse {} → {}",
            during(&fifo, "browse"),
            during(&prio, "browse")
        );
        assert!(
            prio.services["svc_b"].counts.shed.unwrap() > 0,
            "seed {seed}"
        );
    }
}

/// A scenario of two classes with `web` and `bot` parts replaced.
fn two_classes(web: &str, bot: &str, svc: &str) -> String {
    format!(
        "duration: 10s
clients:
  web:
{web}
  bot:
{bot}
services:
  a:
    slots: 4
    service_time: {{dist: constant, value: 1ms}}
{svc}"
    )
}

const WEB: &str = "    arrivals: {rate: 10}\n    entry: a\n    attempt_timeout: 1s";

#[test]
fn bad_classes_are_reported_at_their_key_and_line() {
    let cases: Vec<(&str, String, &str, &str)> = vec![
        (
            "entry missing",
            two_classes(
                WEB,
                "    arrivals: {rate: 5}\n    entry: b\n    attempt_timeout: 1s",
                "",
            ),
            "clients.bot.entry",
            "`b`",
        ),
        (
            "negative rate",
            two_classes(
                WEB,
                "    arrivals: {rate: -5}\n    entry: a\n    attempt_timeout: 1s",
                "",
            ),
            "clients.bot.arrivals.rate",
            "positive",
        ),
        (
            "zero users",
            two_classes(
                WEB,
                "    arrivals: {process: closed, users: 0, think_time: {dist: constant, value: 1s}}\n    entry: a\n    attempt_timeout: 1s",
                "",
            ),
            "clients.bot.arrivals.users",
            "at least 1",
        ),
        (
            "unknown criticality",
            two_classes(
                WEB,
                "    priority: critcal\n    arrivals: {rate: 5}\n    entry: a\n    attempt_timeout: 1s",
                "",
            ),
            "clients.bot.priority",
            "",
        ),
        (
            "shed without a queue cap",
            two_classes(WEB, WEB, "    shed: priority"),
            "services.a.shed",
            "queue_cap",
        ),
        (
            "both forms",
            format!("arrivals: {{rate: 5}}\n{}", two_classes(WEB, WEB, "")),
            "arrivals",
            "not both",
        ),
        (
            "no classes",
            "duration: 10s\nclients: {}\nservices:\n  a: {slots: 1}\n".to_owned(),
            "clients",
            "at least one",
        ),
    ];
    for (what, yaml, key, words) in cases {
        let doc = loadsim::scenario::Document::from_text(std::path::Path::new("t.yaml"), &yaml)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let err = match Scenario::from_document(&doc) {
            Ok(_) => panic!("{what}: accepted"),
            Err(e) => e,
        };
        let d = err
            .diagnostics
            .iter()
            .find(|d| d.key == key)
            .unwrap_or_else(|| panic!("{what}: no diagnostic at `{key}`:\n{err}"));
        assert!(d.message.contains(words), "{what}: {}", d.message);
        let loadsim::scenario::Origin::File { line, .. } = &d.origin else {
            panic!("{what}: {:?}", d.origin)
        };
        let line = line.unwrap_or_else(|| panic!("{what}: no line"));
        let last = key.rsplit('.').next().unwrap();
        let written = yaml.lines().nth(line - 1).unwrap();
        assert!(
            written.contains(last),
            "{what}: line {line} is {written:?}, expected `{last}`"
        );
    }
}

#[test]
fn a_limit_partitioned_by_class_keeps_checkouts_share_through_the_window() {
    // Measured: checkout 0.12-0.14 with one shared Gradient2 limit at svc_b, 0.39-0.42 with
    // the limit partitioned checkout 0.8, browse 0.2 (20 s window, seeds 7, 11, 13).
    for seed in SEEDS {
        let shared = run("admission/classes_gradient2", &[], seed);
        let parted = run("admission/classes_gradient2_partitioned", &[], seed);
        let during = |r: &RunSummary, c: &str| class(r, c).success_rate_during.unwrap();
        assert!(
            during(&parted, "checkout") > during(&shared, "checkout") + 0.2,
            "seed {seed}: checkout {} → {}",
            during(&shared, "checkout"),
            during(&parted, "checkout")
        );
        assert!(
            during(&parted, "browse") < during(&shared, "browse"),
            "seed {seed}"
        );
        for r in [&shared, &parted] {
            assert_eq!(class(r, "checkout").success_rate_before, Some(1.0));
        }
    }
}

#[test]
fn bad_partitions_are_reported_at_their_key() {
    let svc = |limit: &str| format!("    concurrency_limit: {limit}");
    for (limit, key, words) in [
        (
            "{algorithm: fixed, limit: 4, partitions: {web: 0.5, bots: 0.5}}",
            "services.a.concurrency_limit.partitions.bots",
            "not a request class",
        ),
        (
            "{algorithm: fixed, limit: 4, partitions: {web: 0.7, bot: 0.5}}",
            "services.a.concurrency_limit.partitions",
            "at most 1",
        ),
        (
            "{algorithm: fixed, limit: 4, partitions: {web: 1.5}}",
            "services.a.concurrency_limit.partitions.web",
            "[0, 1]",
        ),
        (
            "{algorithm: envoy_gradient, concurrency_update_interval: 1s, min_rtt_calc_interval: 10s, partitions: {web: 0.5}}",
            "services.a.concurrency_limit.partitions",
            "no partitions",
        ),
    ] {
        let yaml = two_classes(WEB, WEB.replace("10", "5").as_str(), &svc(limit));
        let doc =
            loadsim::scenario::Document::from_text(std::path::Path::new("t.yaml"), &yaml).unwrap();
        let err = Scenario::from_document(&doc).expect_err(limit);
        let d = err
            .diagnostics
            .iter()
            .find(|d| d.key == key)
            .unwrap_or_else(|| panic!("{limit}: no diagnostic at `{key}`:\n{err}"));
        assert!(d.message.contains(words), "{limit}: {}", d.message);
    }
}

/// `front` calls `catalog` (10 ms) for every request and `payments` (50 ms) for `checkout`'s
/// only; constant arrivals, so every number is exact. `payments_extra` goes on that call.
fn storefront(payments_extra: &str, browse: bool) -> String {
    let browse = if browse {
        "  browse: {arrivals: {rate: 20, process: constant}, entry: front, attempt_timeout: 5s, retries: 3}\n"
    } else {
        ""
    };
    format!(
        "duration: 10s
seed: 7
clients:
{browse}  checkout: {{arrivals: {{rate: 10, process: constant}}, entry: front, attempt_timeout: 5s, retries: 1}}
services:
  front:
    slots: 100
    service_time: {{dist: constant, value: 1ms}}
    calls:
      catalog: {{attempt_timeout: 1s}}
      payments: {{attempt_timeout: 1s, classes: [checkout]{payments_extra}}}
  catalog: {{slots: 100, service_time: {{dist: constant, value: 10ms}}}}
  payments: {{slots: 100, service_time: {{dist: constant, value: 50ms}}}}
"
    )
}

#[test]
fn a_call_restricted_to_classes_is_made_by_their_requests_only() {
    let yaml = storefront("", true);
    let r = crate::common::run_text(&yaml);
    // 10 s at 20/s and 10/s: 200 browse and 100 checkout requests, all served.
    assert_eq!(r.metrics.succeeded, 300);
    assert_eq!(r.services["catalog"].counts.arrivals, 300);
    assert_eq!(r.services["payments"].counts.arrivals, 100);
    // Browse skips payments: 1 + 10 ms; checkout makes both calls in order: 1 + 10 + 50 ms.
    let p50 = |c: &str| class(&r, c).success_latency_p50_s.unwrap();
    assert!((p50("browse") - 0.011).abs() < 2e-5, "{}", p50("browse"));
    assert!(
        (p50("checkout") - 0.061).abs() < 1e-4,
        "{}",
        p50("checkout")
    );
    // R1 follows each class's own calls: payments sees checkout's 2 client attempts, not
    // browse's 4; catalog sees browse's 4.
    let sc = crate::common::scenario_text(&yaml);
    let worst = sc.worst_case_attempts();
    let at = |name: &str| worst[sc.services.iter().position(|s| s.name == name).unwrap()];
    assert_eq!((at("front"), at("catalog"), at("payments")), (4, 4, 2));
    let chains = sc.attempt_chains(sc.service_id("payments").unwrap());
    assert_eq!(
        chains,
        vec![vec![
            ("client->front".to_owned(), 2),
            ("front->payments".to_owned(), 1)
        ]]
    );
    // The class named by the shorthand is `default`.
    let one = "duration: 1s\narrivals: {rate: 10, process: constant}\n\
               client: {entry: a, attempt_timeout: 1s}\nservices:\n  a:\n    slots: 4\n    calls:\n\
               \x20     b: {attempt_timeout: 1s, classes: [default]}\n  b: {slots: 4}\n";
    assert_eq!(
        crate::common::run_text(one).services["b"].counts.arrivals,
        10
    );
}

#[test]
fn a_class_that_skips_a_call_draws_nothing_from_its_probability_stream() {
    // payments at probability 0.5: the draws go to checkout's jobs only, in their order, so the
    // same checkout requests call payments whether browse requests run beside them or not.
    let both = crate::common::run_text(&storefront(", probability: 0.5", true));
    let alone = crate::common::run_text(&storefront(", probability: 0.5", false));
    let n = both.services["payments"].counts.arrivals;
    assert_eq!(n, alone.services["payments"].counts.arrivals);
    assert!((30..=70).contains(&n), "{n} of 100");
    assert_eq!(both.services["catalog"].counts.arrivals, 300);
}

#[test]
fn bad_call_classes_are_reported_at_their_key_and_line() {
    for (classes, key, words) in [
        (
            "[chekout]",
            "services.front.calls.payments.classes[0]",
            "did you mean `checkout`",
        ),
        (
            "[checkout, checkout]",
            "services.front.calls.payments.classes[1]",
            "twice",
        ),
        (
            "[]",
            "services.front.calls.payments.classes",
            "lists no class",
        ),
    ] {
        let yaml =
            storefront("", true).replace("classes: [checkout]", &format!("classes: {classes}"));
        let doc =
            loadsim::scenario::Document::from_text(std::path::Path::new("t.yaml"), &yaml).unwrap();
        let err = Scenario::from_document(&doc).expect_err(classes);
        let d = err
            .diagnostics
            .iter()
            .find(|d| d.key == key)
            .unwrap_or_else(|| panic!("{classes}: no diagnostic at `{key}`:\n{err}"));
        assert!(d.message.contains(words), "{classes}: {}", d.message);
        let loadsim::scenario::Origin::File { line, .. } = &d.origin else {
            panic!("{classes}: {:?}", d.origin)
        };
        assert_eq!(*line, Some(12), "{classes}: {d:?}");
    }
}

/// The run table says why a recovery time is missing in a class's row as it does in the overall
/// row: "never" where a recovery span fits after the window and none recovered, "not measurable"
/// where none fits, `—` without a fault window.
#[test]
fn a_class_row_says_never_and_not_measurable_like_the_overall_row() {
    use loadsim::report::table::Table;
    let base = run("workload/classes_fifo", &[], 7);
    assert!(base.classes.len() >= 2, "a scenario with classes");
    let cell = |r: &RunSummary, label: &str| -> String {
        let text = Table::build(std::slice::from_ref(r)).to_string();
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("| {label} ")))
            .unwrap_or_else(|| panic!("no row `{label}` in\n{text}"));
        line.rsplit('|').nth(1).unwrap().trim().to_owned()
    };
    let class_label = format!(
        "class `{}` recovery time (s)",
        base.classes.keys().next().unwrap()
    );
    let set = |m: &mut RunMetrics, measurable: bool, fault: bool| {
        m.recovery_s = None;
        m.recovery_measurable = measurable;
        m.fault_end_s = fault.then_some(20.0);
    };
    for (measurable, fault, word) in [
        (true, true, "never"),
        (false, true, "not measurable"),
        (true, false, "—"),
    ] {
        let mut r = base.clone();
        set(&mut r.metrics, measurable, fault);
        for m in r.classes.values_mut() {
            set(m, measurable, fault);
        }
        assert_eq!(cell(&r, "recovery time (s)"), word);
        assert_eq!(
            cell(&r, &class_label),
            word,
            "the class row as the overall row"
        );
    }
    // A class that never recovered while the run as a whole did says so in its own row.
    let mut r = base.clone();
    r.metrics.recovery_s = Some(3.0);
    r.metrics.recovery_measurable = true;
    r.metrics.fault_end_s = Some(20.0);
    for m in r.classes.values_mut() {
        set(m, true, true);
    }
    assert_eq!(cell(&r, "recovery time (s)"), "3.00");
    assert_eq!(cell(&r, &class_label), "never");
}
