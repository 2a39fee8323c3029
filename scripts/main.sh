#!/usr/bin/env bash
# The main job on the embedded default: set up, then the light-playout benchmark on the default device and a
# short 9x9 game of the default engine (RAVE, heavy playouts, the shipped gammas) printed as a board, with its
# result.  Extra arguments go to `jaxgo demo` (`jaxgo demo --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
JAXGO_NO_BROWSER=1 bash scripts/setup.sh  # the main job needs no browser
exec .venv/bin/jaxgo demo "$@"
