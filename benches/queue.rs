//! The event-queue floor: push/pop through the queue alone, no model.
//!
//! - `protected_trace`: replays every push (with its delay) and pop of the article's `protected`
//!   run, so the event count and the pending-set size profile are exactly the simulator's. Compare
//!   its events/s with `scenarios::article_policy(protected)`.
//! - `hold`: the classic hold model at a fixed pending-set size (pop one, push one a random delay
//!   later), for comparison with a bare `BinaryHeap<(time, seq)>` at the same sizes.
//!
//! Each runs on [`EventQueue`] (the radix heap the engine uses) and on a textbook binary heap keyed
//! by `(time, seq)`, with a 16-byte payload like the model's `Event`.
//!
//! Run: `cargo bench --bench queue`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;
use std::sync::LazyLock;

use divan::Bencher;
use divan::counter::ItemsCount;
use loadsim::Scenario;
use loadsim::engine::{EventQueue, QueueOp};
use loadsim::model::{RunOptions, Simulation};
use loadsim::time::SimTime;

fn main() {
    divan::main();
}

/// Stands in for the model's 16-byte `Event`.
type Payload = [u32; 4];

/// Every queue operation of the article's `protected` run.
static PROTECTED: LazyLock<Vec<QueueOp>> = LazyLock::new(|| {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/protected.yaml");
    let sc = Scenario::load(&path, &[], None).expect("scenario loads");
    let (_, ops) = Simulation::new(&sc, RunOptions::default())
        .run_with_queue_ops()
        .expect("run finishes");
    ops
});

fn pops(ops: &[QueueOp]) -> u64 {
    ops.iter().filter(|op| **op == QueueOp::Pop).count() as u64
}

/// The two queues under test, behind one shape.
trait Queue {
    fn new() -> Self;
    fn push(&mut self, at: u64, event: Payload);
    fn pop(&mut self) -> Option<(u64, Payload)>;
}

impl Queue for EventQueue<Payload> {
    fn new() -> Self {
        EventQueue::new()
    }
    #[inline]
    fn push(&mut self, at: u64, event: Payload) {
        EventQueue::push(self, SimTime(at), event);
    }
    #[inline]
    fn pop(&mut self) -> Option<(u64, Payload)> {
        self.pop_if_at_most(SimTime::NEVER).map(|(t, e)| (t.0, e))
    }
}

/// A textbook binary min-heap on `(time, seq)`.
struct BinaryHeapQueue {
    heap: BinaryHeap<Reverse<(u64, u64, Payload)>>,
    seq: u64,
}

impl Queue for BinaryHeapQueue {
    fn new() -> Self {
        BinaryHeapQueue {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }
    #[inline]
    fn push(&mut self, at: u64, event: Payload) {
        self.heap.push(Reverse((at, self.seq, event)));
        self.seq += 1;
    }
    #[inline]
    fn pop(&mut self) -> Option<(u64, Payload)> {
        self.heap.pop().map(|Reverse((t, _, e))| (t, e))
    }
}

fn replay<Q: Queue>(ops: &[QueueOp]) -> u64 {
    let mut q = Q::new();
    let mut now = 0u64;
    let mut check = 0u64;
    for (i, op) in ops.iter().enumerate() {
        match *op {
            QueueOp::Push { delay } => q.push(now + delay, [i as u32, 0, 0, 0]),
            QueueOp::Pop => {
                let (t, e) = q.pop().expect("trace pops only what it pushed");
                now = t;
                check = check.wrapping_add(e[0] as u64);
            }
        }
    }
    check
}

#[divan::bench(types = [EventQueue<Payload>, BinaryHeapQueue], sample_count = 30)]
fn protected_trace<Q: Queue>(bencher: Bencher) {
    let ops = &*PROTECTED;
    bencher
        .counter(ItemsCount::new(pops(ops)))
        .bench(|| replay::<Q>(divan::black_box(ops)));
}

/// Delays for the hold model: uniform over [0, 2^30) ns (≈ 1 s), from a fixed xorshift.
fn delays(n: usize) -> Vec<u64> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x >> 34
        })
        .collect()
}

const HOLD_OPS: usize = 300_000;

#[divan::bench(types = [EventQueue<Payload>, BinaryHeapQueue], args = [100, 3_000, 10_000], sample_count = 30)]
fn hold<Q: Queue>(bencher: Bencher, pending: usize) {
    let d = delays(pending + HOLD_OPS);
    bencher
        .counter(ItemsCount::new(HOLD_OPS))
        .with_inputs(|| {
            let mut q = Q::new();
            for (i, &delay) in d[..pending].iter().enumerate() {
                q.push(delay, [i as u32, 0, 0, 0]);
            }
            q
        })
        .bench_local_values(|mut q| {
            let mut check = 0u64;
            for &delay in &d[pending..] {
                let (now, e) = q.pop().expect("never empty");
                check = check.wrapping_add(e[0] as u64);
                q.push(now + delay, e);
            }
            check
        });
}
