#!/usr/bin/env bash
# The GPU figures of benchmarks/RESULTS.md ("GPU") in one run: CPU/GPU agreement of the playouts, light playouts
# on 9x9 and 19x19 with both kernels (light_wide: dense sampling, lanes in step; light: sample, then validate) over
# a batch and lanes sweep, pgx on the same GPU, heavy playouts, playouts inside a search, the analysis server,
# and the rules/playout tests on the GPU.  Every step has its own time limit and the whole run a deadline
# (GPU_BENCH_SECONDS, default 480), so a slow step costs its own figure and not the others'.
#
#   JAXGO_EXTRAS=dev,compare,cuda12 bash scripts/setup.sh     # once, on the GPU machine
#   PYTHON=.venv/bin/python bash scripts/gpu_bench.sh          # writes gpu_bench/{log.txt,bench.jsonl}
#
# OUT (default gpu_bench) names the output folder; PYTHON the interpreter (default python3); GPU_BENCH_ONLY a
# space-separated list of the steps to run (default all, in the order below).  GPU_BENCH_SMOKE=1 divides every batch, lane count,
# playout count and client count by about 16,384 (at least 8) so the same steps run in seconds on a CPU (the
# test suite does that: tests/test_gpu_bench.py); its figures mean nothing.  GPU_BENCH_CHECK and GPU_BENCH_TESTS
# narrow the device check's policies and the test step's files; GPU_BENCH_GAMES and GPU_BENCH_SERIES_SECONDS the
# series' games (default 20) and its time (default 300 s).  Issue 59's figures (server, its host work, the series)
# in one call of about 10 minutes:
#
#   GPU_BENCH_ONLY="serve serve-host1 serve-host0 serve-host-steps series9 series9-report" GPU_BENCH_SECONDS=560 \
#       PYTHON=.venv/bin/python bash scripts/gpu_bench.sh
set -uo pipefail
cd "$(dirname "$0")/.."
py="${PYTHON:-python3}"
out="${OUT:-gpu_bench}"
mkdir -p "$out"
log="$out/log.txt"
jsonl="$out/bench.jsonl"
deadline=$(( $(date +%s) + ${GPU_BENCH_SECONDS:-480} ))
smoke="${GPU_BENCH_SMOKE:-}"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1

# n COUNT: COUNT, or in smoke mode COUNT / 16384 (at least 8).
n() {
    if [ -n "$smoke" ]; then
        local small=$(( $1 / 16384 ))
        echo $(( small < 8 ? 8 : small ))
    else
        echo "$1"
    fi
}

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

bench=("$py" -m jaxgo bench)
light=("${bench[@]}" playouts --backend xla --json)
wide=("${light[@]}" --light-kernel wide)
validate=("${light[@]}" --light-kernel validate)
# light_wide, the accelerator's light kernel: lanes sweep, refill interval, then the default lanes
step wide9 120 "${wide[@]}" --size 9 --batch "$(n 1048576)" --lanes "$(n 65536)" "$(n 131072)" "$(n 262144)" \
    --repeats 2
step wide9-refill 90 "${wide[@]}" --size 9 --batch "$(n 1048576)" --lanes "$(n 262144)" --refill-every 1 4 \
    --repeats 2
step wide9-default 60 "${wide[@]}" --size 9 --batch "$(n 1048576)" --repeats 2
step wide9-big 60 "${wide[@]}" --size 9 --batch "$(n 4194304)" --repeats 1
step wide19 120 "${wide[@]}" --size 19 --batch "$(n 262144)" --lanes "$(n 16384)" "$(n 32768)" "$(n 65536)" \
    --repeats 2
step wide19-default 60 "${wide[@]}" --size 19 --batch "$(n 262144)" --repeats 2
# the same games on the GPU as on the CPU (GPU_BENCH_CHECK: the policies, default all four)
step check 100 "$py" scripts/device_check.py --size 9 19 --batch "$(n 2048)" --lanes "$(n 2048)" \
    --policies ${GPU_BENCH_CHECK:-light light_wide heavy rules}
# the bitboard kernel (sample, then validate) and pgx, as before
step light9 90 "${validate[@]}" --size 9 --batch "$(n 65536)" "$(n 262144)" "$(n 1048576)" --lanes "$(n 65536)"
step light9-lanes 60 "${validate[@]}" --size 9 --batch "$(n 1048576)" --lanes "$(n 262144)"
step light19-lanes 60 "${validate[@]}" --size 19 --batch "$(n 262144)" --lanes "$(n 131072)" --repeats 2
step pgx9-big 90 "${wide[@]}" --size 9 --batch "$(n 262144)" --compare pgx --pgx-batch "$(n 65536)" --repeats 1
step heavy9-lanes 60 "${bench[@]}" heavy --size 9 --batch "$(n 1048576)" --lanes "$(n 262144)" --repeats 2 --only heavy
step heavy19-default 45 "${bench[@]}" heavy --size 19 --batch "$(n 262144)" --repeats 2 --only heavy
step search 90 "${bench[@]}" search --backend xla --size 9 --playouts "$(n 65536)" --leaves "$(n 1024)" \
    --playouts-per-leaf 16 --strategies rave --repeats 2
step search-defaults 60 "${bench[@]}" search --backend xla --size 9 --playouts "$(n 65536)" --leaves "$(n 1024)" \
    --playouts-per-leaf 16 --strategies rave --repeats 2 --defaults
step serve 140 "${bench[@]}" serve --clients "$(n 64)" "$(n 256)" --visits "$(n 8192)" --queries 1 \
    --leaves "$(n 256)" --device-batch "$(n 65536)" --repeats 2
# the same server with playouts that cost nothing: the ceiling its host work sets, on one tree thread and on all;
# each line gives host_cpu_us_per_leaf, host_gil_us_per_leaf and python_calls_per_leaf (issue 59); serve-host-steps:
# every search's tree work in its own calls (--per-search-rounds), the path before one call per wave
for threads in 1 0; do
    step "serve-host$threads" 60 "${bench[@]}" serve --host-only --tree-threads "$threads" --clients "$(n 64)" \
        --visits "$(n 8192)" --queries 1 --leaves "$(n 256)" --device-batch "$(n 65536)" --repeats 1
done
step serve-host-steps 60 "${bench[@]}" serve --host-only --per-search-rounds --tree-threads 0 --clients "$(n 64)" \
    --visits "$(n 8192)" --queries 1 --leaves "$(n 256)" --device-batch "$(n 65536)" --repeats 1
# a 9x9 series at 2 s a move: jaxgo on the GPU (xla playouts) against jaxgo on the CPU (native playouts, every core
# of the GPU's host); each finished game is a line of series9.jsonl, so a step cut by its limit keeps its games, and
# series9-report prints the standings (win rates with their intervals) of what was played
series="$out/series9.jsonl"
series_time=$([ -n "$smoke" ] && echo "0:1:1" || echo "0:2:1")
step series9 "${GPU_BENCH_SERIES_SECONDS:-300}" "$py" -m jaxgo match --size "$([ -n "$smoke" ] && echo 5 || echo 9)" \
    --komi 7.5 --games "$([ -n "$smoke" ] && echo 1 || echo "${GPU_BENCH_GAMES:-20}")" --time "$series_time" \
    --results "$series" --player "gpu=$py -m jaxgo gtp --backend xla" --player "cpu=$py -m jaxgo gtp --backend native"
step series9-report 30 "$py" -m jaxgo match --report --results "$series"
# the tests that hold the kernels to the reference board, on the GPU (GPU_BENCH_TESTS: the test files)
workers=$("$py" -c 'import xdist' 2>/dev/null && echo "-n 8")
step tests 150 "$py" -m pytest -q -x -p no:cacheprovider $workers -m "not slow and not gnugo" \
    ${GPU_BENCH_TESTS:-tests/playouts/xla/test_light.py tests/playouts/xla/test_light_wide.py tests/playouts/xla/test_heavy.py \
    tests/playouts/xla/test_rules.py tests/go/test_differential.py}
date -u | tee -a "$log"
