#!/usr/bin/env bash
# Regenerates every file in evidence/calibration/ with the release binary (see reading.md): the
# truth's dashboards and spans, the blind import, the two-pass calibration and the comparison
# under faults. About eight minutes on two cores, most of it the second calibration pass.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --locked
B=target/release/loadsim
E=evidence/calibration
W=target/calibration   # scratch: the spans (13 MB) are not kept
mkdir -p $W
# 1. What the team can see of the hidden truth: its dashboards at two loads (observed_*.yaml)...
python3 $E/dashboards.py $B
# 2. ...and its spans: one request in ten traced, as a head sampler would (each span states it).
$B run $E/truth.yaml --spans $W/truth.spans.jsonl --span-sample 0.1 --quiet > /dev/null
# 3. The blind import: topology, stages, own work, classes and arrivals; every default marked.
$B import traces $W/truth.spans.jsonl --out $E/imported.yaml 2> $E/imported.txt
# 4. model.yaml (hand-written: imported.yaml + the team's configuration) calibrated in two
#    passes. Exit 1 means a figure stays outside its tolerance: reported, not a failure here.
calibrate() { "$B" calibrate "$@" --quiet || [ $? -eq 1 ]; }
#    Pass 1, the peak window: the slots of edge, api, orders and inventory, from their
#    utilization (the database's figures wait for pass 2).
calibrate $E/model.yaml --observed $E/observed_peak.yaml \
  --fit services.edge.slots=16..1024 --fit services.api.slots=4..128 \
  --fit services.orders.slots=2..64 --fit services.inventory.slots=4..128 \
  --write $E/pass1.yaml --out $E/pass1 > /dev/null
#    Pass 2, both windows: the database's slots, contention and service-time scale, which one
#    load cannot tell apart (docs/calibration.md, "Several windows").
calibrate $E/pass1.yaml --observed $E/observed_peak.yaml --observed $E/observed_night.yaml \
  --fit services.db.slots=8..128 --fit services.db.contention.sigma=0.001..0.1 \
  --fit services.db.contention.kappa=0.0001..0.01 --fit services.db.service_time.scale=0.5..1.5 \
  --write $E/calibrated.yaml --out $E/pass2 > /dev/null
# 5. Truth, uncalibrated and calibrated under the same three database faults.
python3 $E/compare.py $B
# 6. Real captured traces (tests/fixtures/traces, their sources and licence in its README): the
#    scenario each builds, what the import said, and a run of it.
mkdir -p $E/real
for t in tests/fixtures/traces/*.json; do
  n=$(basename "$t" .json)
  $B import traces "$t" --out $E/real/$n.yaml 2> $E/real/$n.import.txt
  $B run $E/real/$n.yaml --quiet > $E/real/$n.run.md
done
