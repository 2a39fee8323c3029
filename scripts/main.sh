#!/usr/bin/env bash
# The main job on the embedded default: set up, then the light-playout benchmark on the default device and a
# short flat-Monte-Carlo game on 9x9 printed as a board.  Extra arguments go to `jaxgo demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
JAXGO_NO_BROWSER=1 bash scripts/setup.sh  # the main job needs no browser
exec .venv/bin/jaxgo demo "$@"
