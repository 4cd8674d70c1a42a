#!/bin/bash
# Submit a sweep as a Slurm job array of N shards, and its merge as a job that starts when every
# shard has succeeded. Prints the two job ids ("ARRAY_ID MERGE_ID") on stdout.
#
#   contrib/slurm/submit.sh sweeps/blog37.yaml 8 shards/blog37 evidence/blog37 [SBATCH_OPTION...]
#
# Options after the four arguments go to both sbatch calls (e.g. --partition=batch,
# --output=logs/%x-%A_%a.out). Run it from the folder the sweep file's paths are relative to
# (the jobs start there). LOADSIM names the binary the jobs run (default `loadsim` on PATH).
set -euo pipefail

if [ $# -lt 4 ]; then
    echo "usage: $0 SWEEP_FILE SHARDS SHARD_DIR OUT_DIR [SBATCH_OPTION...]" >&2
    exit 2
fi
sweep=$1 shards=$2 shard_dir=$3 out=$4
shift 4
case $shards in
    '' | *[!0-9]* | 0) echo "$0: SHARDS must be a whole number ≥ 1, not '$shards'" >&2; exit 2 ;;
esac
here=$(dirname "$0")
export LOADSIM=${LOADSIM:-loadsim}

array=$(sbatch --parsable --array="0-$((shards - 1))" \
    --export="ALL,SWEEP=$sweep,SHARDS=$shard_dir" "$@" "$here/sweep.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes \
    --export="ALL,SHARDS=$shard_dir,OUT=$out" "$@" "$here/merge.sbatch")
merge=${merge%%;*}
echo "$array $merge"
