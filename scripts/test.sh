#!/usr/bin/env bash
# The test suite: set up (GNU Go, .venv with the dev/compare/chess/clients extras), ruff, then pytest on all cores.
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
exec .venv/bin/python -m pytest -n "${JAXGO_TEST_WORKERS:-auto}" --durations=15 "$@"
