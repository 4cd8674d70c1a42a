#!/usr/bin/env python3
"""The article's experiment written as a SimPy user would write it: the yardstick a user would pick.

The same model as benches/python/article.py and loadsim's scenarios/{naive,deadline,
deadline_budget,protected}.yaml (docs/model.md §1–§2: client → gateway → svc_a → svc_b, Poisson
400/s for 60 s, svc_b ten times slower from 10 s to 30 s, the four policies), written with SimPy's
own parts instead of a hand-rolled event loop:

- a service's slots are a `simpy.Resource` (FIFO queue of `Request`s, `queue_cap` read off
  `Resource.queue` when a request arrives); every admitted request is a process that waits for its
  slot, does its work (`env.timeout` of an exponential draw) or its downstream call, releases the
  slot and answers through an `Event` it succeeds with the outcome (`ok`, `error`);
- an attempt is the caller waiting on `reply | env.timeout(timeout)` (an `AnyOf` condition); the
  timeout is created before the request is sent, so at the same instant it is processed first and
  wins (docs/model.md §2.1 rule 2); a reject is a reply that is itself `env.timeout(0.5 ms)` with
  the value `reject`;
- retries, full-jitter backoff (base 10 ms), deadline propagation with drop-expired at dequeue and
  the gRFC A6 bucket (10 tokens, 0.1 per success) are plain Python in the processes, as in
  article.py.

Nothing is cancelled in these four policies (loadsim's `cancel_on_abandon` is off): a caller that
times out stops waiting and the callee's process goes on, its late reply succeeding an event that
nobody waits for — as loadsim and article.py do. So no process is interrupted; the SimPy idiom
`with res.request() as req: yield req | env.timeout(t)` would *cancel* a queued request when its
waiter gives up, which is a different model (reneging), and is not used here.

Where it differs from loadsim, and why its numbers agree in distribution only: float seconds
instead of integer nanoseconds; Python's `random` (three streams as in article.py: arrivals seed,
svc_b work seed + 1, backoff jitter seed + 2) instead of loadsim's per-purpose ChaCha8 streams;
a freed slot is handed to the queue's head when SimPy processes the `Release` event (at the same
instant, before the reply the job then sends: docs/model.md §2.1 rule 1), and a request whose
deadline passed is dropped by the process that got the slot (it releases it at once, taking no
time). The run goes on until nothing is pending (loadsim stops at a 30 s drain horizon, which
these policies never reach).

    target/simpy-venv/bin/python benches/python/simpy_article.py protected      # seed 7
    target/simpy-venv/bin/python benches/python/simpy_article.py all 11         # four policies

SimPy is pinned in benches/python/paired.py, which creates target/simpy-venv and installs it.
"""

import random
import sys

import simpy

DURATION = 60.0
RATE = 400.0
SLOW_FROM, SLOW_TO = 10.0, 30.0
REJECT_DELAY = 0.0005

POLICIES = {
    #                gw→a timeout, a→b timeout, gw retries, a retries, deadlines, throttle, caps (a, b)
    "naive": dict(gw_timeout=1.0, a_timeout=1.0, gw_retries=3, a_retries=3, deadline=False,
                  throttle=False, caps=(None, None)),
    "deadline": dict(gw_timeout=1.0, a_timeout=0.3, gw_retries=3, a_retries=3, deadline=True,
                     throttle=False, caps=(None, None)),
    "deadline_budget": dict(gw_timeout=1.0, a_timeout=0.3, gw_retries=0, a_retries=2,
                            deadline=True, throttle=True, caps=(None, None)),
    "protected": dict(gw_timeout=1.0, a_timeout=0.3, gw_retries=0, a_retries=2, deadline=True,
                      throttle=True, caps=(64, 16)),
}


class Service:
    """A service: `slots` as a simpy.Resource, an optional queue cap, drop-expired at dequeue."""

    def __init__(self, env, slots, cap, drop_expired, work):
        self.env = env
        self.slots = simpy.Resource(env, capacity=slots)
        self.cap = cap
        self.drop_expired = drop_expired
        self.work = work  # work(deadline) is a generator returning "ok" or "error"
        self.arrivals = 0
        self.arrivals_in_window = 0
        self.max_queue = 0
        self.rejected_full = 0
        self.dropped_expired = 0

    def submit(self, deadline):
        """Send a request; returns the event its reply succeeds, with the outcome as value."""
        env = self.env
        self.arrivals += 1
        if SLOW_FROM <= env.now < SLOW_TO:
            self.arrivals_in_window += 1
        queue = self.slots.queue
        if self.cap is not None and len(queue) >= self.cap:
            self.rejected_full += 1
            return env.timeout(REJECT_DELAY, value="reject")
        reply = env.event()
        # The slot is asked for now, so that the queue (and its cap) sees this request at once.
        env.process(self.job(self.slots.request(), deadline, reply))
        if len(queue) > self.max_queue:
            self.max_queue = len(queue)
        return reply

    def job(self, slot, deadline, reply):
        yield slot
        if self.drop_expired and deadline is not None and self.env.now >= deadline:
            self.dropped_expired += 1
            self.slots.release(slot)
            reply.succeed("error")
            return
        outcome = yield from self.work(deadline)
        # The slot goes back (to the queue's head) before the reply is processed.
        self.slots.release(slot)
        reply.succeed(outcome)


class Throttle:
    """gRFC A6: one bucket per caller per downstream."""

    def __init__(self, max_tokens=10.0, ratio=0.1):
        self.max, self.ratio, self.tokens = max_tokens, ratio, max_tokens

    def failure(self):
        self.tokens = max(0.0, self.tokens - 1.0)

    def success(self):
        self.tokens = min(self.max, self.tokens + self.ratio)

    def allows(self):
        return self.tokens > self.max / 2


def call(env, rng, target, deadline, timeout_cfg, retries, propagate, throttle):
    """One call: attempts with timeouts, full-jitter backoff (base 10 ms), optional A6 throttle."""
    n = 0
    while True:
        timeout = timeout_cfg
        if deadline is not None:
            timeout = min(timeout, deadline - env.now)
            if timeout <= 0:
                return "error"
        timer = env.timeout(timeout)
        reply = target.submit(env.now + timeout if propagate else None)
        settled = yield timer | reply
        outcome = "timeout" if timer in settled else settled[reply]
        if outcome == "ok":
            if throttle:
                throttle.success()
            return "ok"
        if throttle:
            throttle.failure()
        if n >= retries or (deadline is not None and env.now >= deadline):
            return "error"
        if throttle and not throttle.allows():
            return "error"
        yield env.timeout(rng.uniform(0.0, 0.010 * (2 ** n)))
        n += 1


def run(policy, seed=7):
    p = POLICIES[policy]
    env = simpy.Environment()
    arrivals_rng = random.Random(seed)
    b_rng = random.Random(seed + 1)
    jitter = random.Random(seed + 2)
    cap_a, cap_b = p["caps"]

    def b_work(deadline):
        mean = 0.2 if SLOW_FROM <= env.now < SLOW_TO else 0.02
        yield env.timeout(b_rng.expovariate(1.0 / mean))
        return "ok"

    svc_b = Service(env, 16, cap_b, p["deadline"], b_work)
    a_throttle = Throttle() if p["throttle"] else None

    def a_work(deadline):
        outcome = yield from call(env, jitter, svc_b, deadline, p["a_timeout"], p["a_retries"],
                                  p["deadline"], a_throttle)
        return "ok" if outcome == "ok" else "error"

    svc_a = Service(env, 128, cap_a, p["deadline"], a_work)

    def gw_work(deadline):
        outcome = yield from call(env, jitter, svc_a, deadline, p["gw_timeout"], p["gw_retries"],
                                  p["deadline"], None)
        return "ok" if outcome == "ok" else "error"

    gateway = Service(env, 512, None, p["deadline"], gw_work)

    seconds = int(DURATION)
    arrived = [0] * seconds
    succeeded = [0] * seconds

    def user():
        """The client: up to 3 attempts of at most 1 s each, 50 ms apart."""
        second = int(env.now)
        arrived[second] += 1
        for attempt in range(3):
            deadline = env.now + 1.0
            timer = env.timeout(1.0)
            reply = gateway.submit(deadline if p["deadline"] else None)
            settled = yield timer | reply
            if timer not in settled and settled[reply] == "ok":
                succeeded[second] += 1
                return
            if attempt < 2:
                yield env.timeout(0.05)

    def arrivals():
        while True:
            gap = arrivals_rng.expovariate(RATE)
            if env.now + gap >= DURATION:
                return
            yield env.timeout(gap)
            env.process(user())

    env.process(arrivals())
    env.run()

    def share(lo, hi):
        a = sum(arrived[lo:hi])
        return sum(succeeded[lo:hi]) / a if a else float("nan")

    recovery = None
    for s in range(int(SLOW_TO), seconds - 2):
        if share(s, s + 3) >= 0.99:
            recovery = s - int(SLOW_TO)
            break
    users = sum(arrived)
    in_window = sum(arrived[int(SLOW_FROM):int(SLOW_TO)])
    return {
        "policy": policy,
        "seed": seed,
        "users": users,
        "success_before": share(0, int(SLOW_FROM)),
        "success_during": share(int(SLOW_FROM), int(SLOW_TO)),
        "success_after": share(int(SLOW_TO), seconds),
        "recovery_s": recovery,
        "gateway_attempts_per_request": gateway.arrivals / users,
        "svc_b_arrivals_in_window_per_request": svc_b.arrivals_in_window / in_window,
        "svc_b_max_queue": svc_b.max_queue,
        "svc_a_max_queue": svc_a.max_queue,
    }


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "protected"
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    names = list(POLICIES) if which == "all" else [which]
    for name in names:
        if name not in POLICIES:
            sys.exit(f"unknown policy {name!r}; one of {', '.join(POLICIES)} or all")
        r = run(name, seed)
        rec = "never" if r["recovery_s"] is None else r["recovery_s"]
        print(f"{r['policy']:<16} users {r['users']}  "
              f"success {r['success_before']:.3f}/{r['success_during']:.3f}/"
              f"{r['success_after']:.3f}  recovery {rec}  "
              f"gateway attempts/request {r['gateway_attempts_per_request']:.2f}  "
              f"svc_b arrivals in window/request {r['svc_b_arrivals_in_window_per_request']:.2f}  "
              f"max queue svc_a {r['svc_a_max_queue']} svc_b {r['svc_b_max_queue']}")


if __name__ == "__main__":
    main()
