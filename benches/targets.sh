#!/usr/bin/env bash
# The speed targets of issue 17, measured the way evidence/perf.md measures them: whole-process
# instruction counts under callgrind (deterministic on a shared, noisy machine), per user request,
# for each of the article's four policies at one seed, against the plain-Python model
# (benches/python/article.py, same policy and seed, also whole process under callgrind).
#
# Targets (benchmarks, not tests; this script prints "met" / "NOT met", it never fails a build):
#   protected  <= 2 000 instructions per user request, <= 5 events per user request
#   naive      <= 3 300 instructions per user request
#   every policy >= 80x fewer instructions per user request than the Python model (100x the aim)
#
#   benches/targets.sh [BINARY] [SEED]      # from the repository root; BINARY defaults to
#                                            # target/release/loadsim, SEED to 7
# Environment: PYTHON (default python3, resolved through `pyenv which` when pyenv shims it, since
# callgrind must see the interpreter itself, not a shell shim); SKIP_PYTHON=1 skips the Python
# runs (about 5-10 minutes under callgrind for the four policies) and reports loadsim alone.
# Needs valgrind and jq.
set -euo pipefail

BIN=${1:-target/release/loadsim}
SEED=${2:-7}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
PY=${PYTHON:-python3}
if command -v pyenv >/dev/null 2>&1; then PY=$(pyenv which "$PY"); fi

instructions() { # callgrind output file -> total Ir
    awk '/^(summary|totals):/ {print $2; exit}' "$1"
}

printf '| policy | events | user requests | instr. (M) | instr./request | events/request | python instr./request | ratio | targets |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
for p in protected naive deadline deadline_budget; do
    valgrind --tool=callgrind --callgrind-out-file="$OUT/$p.cg" \
        "$BIN" run "scenarios/$p.yaml" --seed "$SEED" >/dev/null 2>"$OUT/$p.err"
    ir=$(instructions "$OUT/$p.cg")
    json=$("$BIN" run "scenarios/$p.yaml" --seed "$SEED" --format json)
    req=$(jq '.[0].metrics.requests' <<<"$json")
    events=$(jq '.[0].engine.events' <<<"$json")
    per=$((ir / req))
    epr=$(awk -v e="$events" -v r="$req" 'BEGIN {printf "%.2f", e / r}')
    verdict=""
    case $p in
        protected)
            [ "$per" -le 2000 ] && verdict+="≤2000 met" || verdict+="≤2000 NOT met"
            awk -v x="$epr" 'BEGIN {exit !(x <= 5)}' && verdict+=", ≤5 ev met" || verdict+=", ≤5 ev NOT met" ;;
        naive)
            [ "$per" -le 3300 ] && verdict+="≤3300 met" || verdict+="≤3300 NOT met" ;;
    esac
    if [ "${SKIP_PYTHON:-0}" = 1 ]; then
        pyper="—"; ratio="—"
    else
        valgrind --tool=callgrind --callgrind-out-file="$OUT/py-$p.cg" \
            "$PY" benches/python/article.py "$p" >"$OUT/py-$p.out" 2>"$OUT/py-$p.err"
        pyir=$(instructions "$OUT/py-$p.cg")
        pyreq=$(awk '{for (i = 1; i < NF; i++) if ($i == "users") print $(i + 1)}' "$OUT/py-$p.out")
        pyper=$((pyir / pyreq))
        ratio=$(awk -v a="$pyper" -v b="$per" 'BEGIN {printf "%.1f×", a / b}')
        awk -v x="${ratio%×}" 'BEGIN {exit !(x >= 80)}' && verdict+="; ≥80× met" || verdict+="; ≥80× NOT met"
    fi
    printf '| %s | %s | %s | %.1f | %s | %s | %s | %s | %s |\n' \
        "$p" "$events" "$req" "$(awk -v x="$ir" 'BEGIN {print x / 1e6}')" "$per" "$epr" "$pyper" "$ratio" "${verdict#; }"
done
