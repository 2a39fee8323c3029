#!/usr/bin/env bash
# The test suite: set up (GNU Go, .venv with the dev/compare/chess/clients extras), ruff, then pytest.
# Long experiments are marked `slow` and excluded; run them with: bash scripts/test.sh -m slow (docs/maintaining.md:
# the check before closing an issue).  Under CI=true a missing ../shared/data fails the run (tests/conftest.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export JAX_PLATFORMS="${JAX_PLATFORMS:-cpu}"
# the kernels the tests compile are small and short-lived: XLA without its expensive LLVM passes and with the
# classic loop emitter in place of the fusion emitters compiles them about twice as fast (the same results; the
# jaxgo command itself keeps the default flags)
export XLA_FLAGS="${XLA_FLAGS:---xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true \
--xla_cpu_use_fusion_emitters=false}"
export JAXGO_REQUIRE_TOOLS=1  # a missing GNU Go or extra fails the run (tests/conftest.py)
.venv/bin/ruff check .  # style, import order, unused names (pyproject.toml [tool.ruff])
# Workers: one process on a machine of 2 cores or fewer (CI's), where two workers compile the same numba and
# XLA kernels twice and cost 1.5 CPU-minutes more for 3 minutes less wall time
# (benchmarks/history/2026-12-07-test-budget.md); a worker per core on larger machines.
# JAXGO_TEST_WORKERS=N (or auto) chooses.
if [ -z "${JAXGO_TEST_WORKERS:-}" ]; then
    if [ "$(nproc 2>/dev/null || echo 1)" -le 2 ]; then JAXGO_TEST_WORKERS=0; else JAXGO_TEST_WORKERS=auto; fi
fi
exec .venv/bin/python -m pytest -n "$JAXGO_TEST_WORKERS" --durations=15 "$@"
