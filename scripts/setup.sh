#!/usr/bin/env bash
# Idempotent set-up for a fresh machine: Debian packages (GNU Go for tests and the match runner; Chromium and
# ChromeDriver for the web-board test) and a virtual environment at .venv holding jaxgo with its extras.
# Called by scripts/main.sh and scripts/test.sh.
#   JAXGO_EXTRAS      extras to install (default: dev,compare,chess,clients; add cuda12 or cuda13 on a GPU machine)
#   JAXGO_NO_BROWSER  set to skip Chromium and Node.js (scripts/main.sh does: the main job needs neither)
set -euo pipefail
cd "$(dirname "$0")/.."

extras="${JAXGO_EXTRAS:-dev,compare,chess,clients}"

# Debian packages the tests need: GNU Go (opponent, dead stones, reading answers), Chromium with its
# driver (the web board's screenshot test), Node.js with npm (Sabaki's GTP library drives jaxgo gtp) and
# Lizzie with Java (tests/gtp/test_clients.py runs Lizzie's own version check on jaxgo's answer).
missing=()
if ! command -v gnugo >/dev/null 2>&1 && [ ! -x /usr/games/gnugo ]; then missing+=(gnugo); fi
if [ "${JAXGO_NO_BROWSER:-}" = "" ]; then
    command -v chromium >/dev/null 2>&1 || missing+=(chromium)
    command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
    command -v node >/dev/null 2>&1 || missing+=(nodejs)
    command -v npm >/dev/null 2>&1 || missing+=(npm)
    [ -f /usr/share/java/lizzie.jar ] || missing+=(liblizzie-java)  # Lizzie's own code checks its version test
    if [ -d ../shared/peers/pachi ]; then  # Pachi, the peer the tests play a short game against, builds with these
        command -v make >/dev/null 2>&1 || missing+=(make)
        command -v cc >/dev/null 2>&1 || missing+=(gcc)
    fi
fi
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing ${missing[*]} (apt-get install -y)" >&2
    if [ "$(id -u)" = "0" ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    elif command -v sudo >/dev/null 2>&1; then
        sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "setup: cannot install ${missing[*]} (not root, no sudo); the tests that need them will fail" >&2
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
    # Compile the native playouts and the search once (numba's on-disk cache), so that the first game or
    # analysis after set-up starts in seconds instead of waiting half a minute for the compiler.
    echo "setup: compiling the native playouts (once)" >&2
    JAX_PLATFORMS=cpu .venv/bin/jaxgo bench playouts --size 9 --batch 64 --policy light heavy rules --threads 1 \
        --repeats 1 --json >/dev/null
    JAX_PLATFORMS=cpu .venv/bin/jaxgo demo --no-bench --size 9 --max-moves 1 --playouts 32 >/dev/null 2>&1
    touch "$stamp"
fi

# Pachi (GPL, a peer used only as an opponent: `jaxgo eval strength run --opponent pachi` and one short test game),
# built once from ../shared/peers/pachi into .peers/pachi when that source is there.
if [ "${JAXGO_NO_BROWSER:-}" = "" ] && [ -d ../shared/peers/pachi ]; then
    bash scripts/pachi.sh >/dev/null
fi

# Sabaki's GTP library for tests/gtp/test_clients.py (versions pinned by tests/gtp/sabaki/package-lock.json).
sabaki=tests/gtp/sabaki
if [ "${JAXGO_NO_BROWSER:-}" = "" ] && command -v npm >/dev/null 2>&1; then
    if [ ! -d "$sabaki/node_modules/@sabaki/gtp" ] || [ "$sabaki/package-lock.json" -nt "$sabaki/node_modules" ]; then
        echo "setup: npm ci in $sabaki" >&2
        (cd "$sabaki" && npm ci --no-audit --no-fund --silent >/dev/null)
    fi
fi
