#!/usr/bin/env bash
# Idempotent set-up for a fresh machine: GNU Go (Debian package, used by tests and the match runner) and a
# virtual environment at .venv holding jaxgo with its extras.  Called by scripts/main.sh and scripts/test.sh.
#   JAXGO_EXTRAS   extras to install (default: dev,compare,chess; add cuda12 or cuda13 on a GPU machine)
set -euo pipefail
cd "$(dirname "$0")/.."

extras="${JAXGO_EXTRAS:-dev,compare,chess}"

if ! command -v gnugo >/dev/null 2>&1 && [ ! -x /usr/games/gnugo ]; then
    echo "setup: installing GNU Go (apt-get install -y gnugo)" >&2
    if [ "$(id -u)" = "0" ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnugo >/dev/null
    elif command -v sudo >/dev/null 2>&1; then
        sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnugo >/dev/null
    else
        echo "setup: cannot install gnugo (not root, no sudo); GNU Go tests will fail" >&2
        exit 1
    fi
fi

python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv with $($python --version)" >&2
    "$python" -m venv .venv
fi
stamp=".venv/.jaxgo-installed-${extras//,/-}"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "setup: pip install -e .[$extras]" >&2
    .venv/bin/python -m pip install -q --upgrade pip >/dev/null
    .venv/bin/python -m pip install -q -e ".[$extras]"
    touch "$stamp"
fi
