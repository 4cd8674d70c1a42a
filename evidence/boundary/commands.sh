#!/usr/bin/env bash
# Regenerates every file in evidence/boundary/ with the release binary (see results.md).
set -euo pipefail
# usage: evidence/boundary/commands.sh   (about a minute of CPU per step on one core)
cd "$(dirname "$0")/../.."
cargo build --release --locked
B=target/release/loadsim
E=evidence/boundary
P="scenarios/naive.yaml scenarios/deadline.yaml scenarios/deadline_budget.yaml scenarios/protected.yaml"
S=7,11,13,17,19
# 1. slow-window length, 0–30 s (0s: an empty window at 10 s), the article's 400 req/s
$B boundary $P --vary faults.slow_b.duration --range 0s..30s --steps 31 --tolerance 50ms --seeds $S --out $E/window > $E/window.md
# 2. load, 200–700 req/s, the article's 20 s window
$B boundary $P --vary arrivals.rate --range 200..700 --steps 26 --tolerance 1 --seeds $S --out $E/load > $E/load.md
# 3. the same with 150 s of arrivals after the window instead of 30 s: slow recovery or never?
$B boundary $P --vary arrivals.rate --range 200..700 --steps 26 --tolerance 1 --seeds $S --set duration=180s --out $E/load-180s > $E/load-180s.md
# 4. phase diagrams: window length × load, naive and protected (deadline_budget for contrast)
$B boundary scenarios/naive.yaml scenarios/deadline_budget.yaml scenarios/protected.yaml --vary faults.slow_b.duration --range 0s..30s --vary arrivals.rate --range 200..700 --steps 11 --seeds 7,11,13 --out $E/phase > $E/phase.md
# 5. the linter on the four policies
$B check $P > $E/check.txt
# 6. close-ups of the transitions found above, one scan point per 50 ms / per 1 req/s: is the
#    criterion monotone near the boundary, or is there a band where seeds and values flip?
$B boundary scenarios/naive.yaml --vary faults.slow_b.duration --range 0s..3s --steps 61 --tolerance 10ms --seeds $S --out $E/window-naive-fine > $E/window-naive-fine.md
$B boundary scenarios/deadline.yaml scenarios/deadline_budget.yaml --vary arrivals.rate --range 350..500 --steps 151 --tolerance 1 --seeds $S --out $E/load-deadline-fine > $E/load-deadline-fine.md
# 7. the other reading of the article (docs/model.md §5.1): svc_a serves the newest request first (LIFO)
$B boundary scenarios/deadline_budget.yaml --vary arrivals.rate --range 200..700 --steps 26 --tolerance 1 --seeds $S --set services.svc_a.queue_discipline=lifo --out $E/load-lifo > $E/load-lifo.md
