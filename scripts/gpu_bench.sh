#!/usr/bin/env bash
# The GPU figures of benchmarks/RESULTS.md ("GPU") in one run: CPU/GPU agreement of the playouts, light playouts
# on 9x9 and 19x19 over a batch and lanes sweep, pgx on the same GPU, heavy playouts, playouts inside a search,
# and the rules/playout tests on the GPU.  Every step has its own time limit and the whole run a deadline
# (GPU_BENCH_SECONDS, default 480), so a slow step costs its own figure and not the others'.
#
#   JAXGO_EXTRAS=dev,compare,cuda12 bash scripts/setup.sh     # once, on the GPU machine
#   PYTHON=.venv/bin/python bash scripts/gpu_bench.sh          # writes gpu_bench/{log.txt,bench.jsonl}
#
# OUT (default gpu_bench) names the output folder; PYTHON the interpreter (default python3); GPU_BENCH_ONLY a
# space-separated list of the steps to run (default all).
set -uo pipefail
cd "$(dirname "$0")/.."
py="${PYTHON:-python3}"
out="${OUT:-gpu_bench}"
mkdir -p "$out"
log="$out/log.txt"
jsonl="$out/bench.jsonl"
deadline=$(( $(date +%s) + ${GPU_BENCH_SECONDS:-480} ))
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1

# step NAME SECONDS COMMAND...: run with at most SECONDS (less if the deadline is nearer), JSON lines to $jsonl.
step() {
    local name=$1 limit=$2
    shift 2
    if [ -n "${GPU_BENCH_ONLY:-}" ] && [[ " $GPU_BENCH_ONLY " != *" $name "* ]]; then
        return
    fi
    local left=$(( deadline - $(date +%s) ))
    if [ "$left" -lt 15 ]; then
        echo "## $name: skipped (deadline)" | tee -a "$log"
        return
    fi
    [ "$limit" -gt "$left" ] && limit=$left
    echo "## $name (limit ${limit}s): $*" | tee -a "$log"
    local start=$(date +%s)
    timeout "$limit" "$@" 2>>"$log" | tee -a "$log" | grep '^{' | sed "s/^{/{\"step\": \"$name\", /" >>"$jsonl"
    echo "## $name: exit ${PIPESTATUS[0]} after $(( $(date +%s) - start ))s" | tee -a "$log"
}

{
    date -u
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1
    "$py" -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__, jax.devices())' 2>&1
} | tee -a "$log"

step check 100 "$py" scripts/device_check.py --size 9 19 --batch 2048 --lanes 2048
step light9 90 "$py" -m jaxgo bench playouts --size 9 --batch 65536 262144 1048576 --lanes 65536 --json
step light9-lanes 60 "$py" -m jaxgo bench playouts --size 9 --batch 1048576 --lanes 262144 --json
step light9-all 60 "$py" -m jaxgo bench playouts --size 9 --batch 1048576 --lanes 1048576 --repeats 2 --json
step light19 90 "$py" -m jaxgo bench playouts --size 19 --batch 65536 262144 --lanes 32768 --repeats 2 --json
step light19-lanes 60 "$py" -m jaxgo bench playouts --size 19 --batch 262144 --lanes 131072 --repeats 2 --json
step pgx9 60 "$py" -m jaxgo bench playouts --size 9 --batch 65536 --lanes 65536 --compare pgx --pgx-batch 8192 \
    --repeats 2 --json
step pgx9-big 60 "$py" -m jaxgo bench playouts --size 9 --batch 262144 --lanes 262144 --compare pgx --pgx-batch 65536 \
    --repeats 1 --json
step heavy 90 "$py" -m jaxgo bench heavy --size 9 19 --batch 65536 --lanes 16384 --repeats 2
step heavy9-lanes 60 "$py" -m jaxgo bench heavy --size 9 --batch 1048576 --lanes 262144 --repeats 2 --only heavy
step heavy19-lanes 60 "$py" -m jaxgo bench heavy --size 19 --batch 262144 --lanes 65536 --repeats 2 --only heavy
step heavy19-default 45 "$py" -m jaxgo bench heavy --size 19 --batch 262144 --repeats 2 --only heavy
step serve 140 "$py" -m jaxgo bench serve --clients 64 256 --visits 8192 --queries 1 --leaves 256 \
    --device-batch 65536 --repeats 2
step search 90 "$py" -m jaxgo bench search --size 9 --playouts 65536 --leaves 1024 --playouts-per-leaf 16 \
    --strategies rave --repeats 2
step search-defaults 60 "$py" -m jaxgo bench search --size 9 --playouts 65536 --leaves 1024 --playouts-per-leaf 16 \
    --strategies rave --repeats 2 --defaults
step tests 150 "$py" -m pytest -q -x -p no:cacheprovider -n 8 -m "not slow and not gnugo" tests/playouts/test_light.py \
    tests/playouts/test_heavy.py tests/playouts/test_rule_policy.py tests/go/test_differential.py
date -u | tee -a "$log"
