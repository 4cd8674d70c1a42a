#!/usr/bin/env python3
"""A plain-Python model of the article's experiment, kept as the yardstick for loadsim's speed.

The reference for every "N× a plain-Python model" figure in evidence/perf.md: the same model
(docs/model.md §1–§2: client → gateway → svc_a → svc_b, Poisson 400/s for 60 s, svc_b ten times
slower from 10 s to 30 s, the four policies), written the way the article writes it — a heapq of
(time, seq, callback) and one closure per event, float seconds, Python's own random module. It is
not loadsim's reading to the bit (other random streams, float time), so its numbers agree with
loadsim's in direction and magnitude only; it prints them so that anyone can see it simulates the
same thing before timing it.

    python3 benches/python/article.py protected      # one policy, one process
    python3 benches/python/article.py all            # the four policies in one process
    python3 benches/python/article.py all 11         # another seed (default 7)

Standard library only.
"""

import heapq
import math
import random
import sys
from collections import deque

DURATION = 60.0
RATE = 400.0
SLOW_FROM, SLOW_TO = 10.0, 30.0

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


class Sim:
    def __init__(self):
        self.now = 0.0
        self.heap = []
        self.seq = 0
        self.events = 0

    def at(self, t, fn):
        self.seq += 1
        heapq.heappush(self.heap, (t, self.seq, fn))

    def run(self):
        heap = self.heap
        while heap:
            t, _, fn = heapq.heappop(heap)
            self.now = t
            self.events += 1
            fn()


class Req:
    """A request at a service: `reply(outcome)` goes back to whoever sent it."""

    __slots__ = ("deadline", "reply", "arrived")

    def __init__(self, deadline, reply):
        self.deadline = deadline
        self.reply = reply
        self.arrived = 0.0


class Service:
    def __init__(self, sim, name, slots, cap, drop_expired, work):
        self.sim, self.name, self.slots, self.cap = sim, name, slots, cap
        self.drop_expired = drop_expired
        self.work = work  # work(req, done) runs the request's work; done(outcome) frees the slot
        self.busy = 0
        self.queue = deque()
        self.max_queue = 0
        self.completed = 0
        self.rejected_full = 0
        self.dropped_expired = 0

    def submit(self, r):
        if self.busy < self.slots:
            self._start(r)
        elif self.cap is not None and len(self.queue) >= self.cap:
            self.rejected_full += 1
            self.sim.at(self.sim.now + 0.0005, lambda: r.reply("reject"))
        else:
            self.queue.append(r)
            if len(self.queue) > self.max_queue:
                self.max_queue = len(self.queue)

    def _start(self, r):
        self.busy += 1

        def done(outcome):
            # Free the slot and start the queue head first, then deliver the reply as an event
            # at the same instant (docs/model.md: the slot goes to the queue, not to whatever
            # the reply sets off).
            self.busy -= 1
            self.completed += 1
            self._next()
            self.sim.at(self.sim.now, lambda: r.reply(outcome))

        self.work(r, done)

    def _next(self):
        while self.queue and self.busy < self.slots:
            r = self.queue.popleft()
            if self.drop_expired and r.deadline is not None and self.sim.now >= r.deadline:
                self.dropped_expired += 1
                r.reply("error")
                continue
            self._start(r)


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


def call(sim, rng, target, deadline_in, timeout_cfg, retries, propagate, throttle, done):
    """One call with attempts, timeouts, full-jitter backoff (base 10 ms) and an optional throttle."""
    state = {"n": 0}

    def attempt():
        now = sim.now
        timeout = timeout_cfg
        if deadline_in is not None:
            timeout = min(timeout, deadline_in - now)
            if timeout <= 0:
                done("error")
                return
        settled = [False]

        def on_reply(outcome):
            if settled[0]:
                return
            settled[0] = True
            finished(outcome)

        def on_timeout():
            if settled[0]:
                return
            settled[0] = True
            finished("timeout")

        sim.at(now + timeout, on_timeout)
        target.submit(Req(now + timeout if propagate else None, on_reply))

    def finished(outcome):
        if outcome == "ok":
            if throttle:
                throttle.success()
            done("ok")
            return
        if throttle:
            throttle.failure()
        n = state["n"]
        if n >= retries or (deadline_in is not None and sim.now >= deadline_in):
            done("error")
            return
        if throttle and not throttle.allows():
            done("error")
            return
        state["n"] = n + 1
        sim.at(sim.now + rng.uniform(0.0, 0.010 * (2 ** n)), attempt)

    attempt()


def run(policy, seed=7):
    p = POLICIES[policy]
    sim = Sim()
    arrivals_rng = random.Random(seed)
    b_rng = random.Random(seed + 1)
    jitter = random.Random(seed + 2)
    cap_a, cap_b = p["caps"]

    def b_work(r, done):
        now = sim.now
        mean = 0.2 if SLOW_FROM <= now < SLOW_TO else 0.02
        sim.at(now + b_rng.expovariate(1.0 / mean), lambda: done("ok"))

    svc_b = Service(sim, "svc_b", 16, cap_b, p["deadline"], b_work)
    a_throttle = Throttle() if p["throttle"] else None

    def a_work(r, done):
        call(sim, jitter, svc_b, r.deadline, p["a_timeout"], p["a_retries"], p["deadline"],
             a_throttle, lambda o: done("ok" if o == "ok" else "error"))

    svc_a = Service(sim, "svc_a", 128, cap_a, p["deadline"], a_work)

    def gw_work(r, done):
        call(sim, jitter, svc_a, r.deadline, p["gw_timeout"], p["gw_retries"], p["deadline"],
             None, lambda o: done("ok" if o == "ok" else "error"))

    gateway = Service(sim, "gateway", 512, None, p["deadline"], gw_work)

    seconds = int(DURATION)
    arrived = [0] * seconds
    succeeded = [0] * seconds

    def user(t0):
        second = int(t0)
        arrived[second] += 1
        state = {"attempts": 0}

        def attempt():
            state["attempts"] += 1
            now = sim.now

            def end(outcome):
                if outcome == "ok":
                    succeeded[second] += 1
                elif state["attempts"] < 3:
                    sim.at(sim.now + 0.05, attempt)

            deadline = now + 1.0
            settled = [False]

            def on_reply(outcome):
                if not settled[0]:
                    settled[0] = True
                    end(outcome)

            def on_timeout():
                if not settled[0]:
                    settled[0] = True
                    end("timeout")

            sim.at(deadline, on_timeout)
            gateway.submit(Req(deadline if p["deadline"] else None, on_reply))

        attempt()

    def arrival():
        now = sim.now
        user(now)
        nxt = now + arrivals_rng.expovariate(RATE)
        if nxt < DURATION:
            sim.at(nxt, arrival)

    sim.at(arrivals_rng.expovariate(RATE), arrival)
    sim.run()

    def share(lo, hi):
        a = sum(arrived[lo:hi])
        return sum(succeeded[lo:hi]) / a if a else float("nan")

    recovery = None
    for s in range(int(SLOW_TO), seconds - 2):
        if share(s, s + 3) >= 0.99:
            recovery = s - int(SLOW_TO)
            break
    users = sum(arrived)
    return {
        "policy": policy,
        "users": users,
        "events": sim.events,
        "success_before": share(0, int(SLOW_FROM)),
        "success_during": share(int(SLOW_FROM), int(SLOW_TO)),
        "success_after": share(int(SLOW_TO), seconds),
        "recovery_s": recovery,
        # The gateway has no cap and the run drains, so every request it got completed or was
        # dropped: its arrivals, counted here rather than on the hot path.
        "gateway_attempts_per_request": (gateway.completed + gateway.dropped_expired) / users,
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
        print(f"{r['policy']:<16} users {r['users']}  events {r['events']}  "
              f"success {r['success_before']:.3f}/{r['success_during']:.3f}/"
              f"{r['success_after']:.3f}  recovery {rec}  "
              f"gateway attempts/request {r['gateway_attempts_per_request']:.2f}  "
              f"max queue svc_a {r['svc_a_max_queue']} svc_b {r['svc_b_max_queue']}")


if __name__ == "__main__":
    main()
