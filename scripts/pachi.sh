#!/usr/bin/env bash
# Build Pachi (a peer engine, GPL, used only as an opponent) from ../shared/peers/pachi into .peers/pachi/ (git-
# ignored) and print the binary's path. Reuses a build already there; prints a message and exits 3 when the
# source or a C compiler is missing, so callers can skip.
#   PACHI_SRC   the peer folder (default: ../shared/peers/pachi beside the checkout)
#   PACHI_OUT   where to build (default: .peers/pachi in the checkout)
#   JOBS        parallel make jobs (default 2)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src="${PACHI_SRC:-$root/../shared/peers/pachi}"
out="${PACHI_OUT:-$root/.peers/pachi}"
if [ -x "$out/pachi" ] && [ -f "$out/patterns_mm.gamma" ]; then
    echo "$out/pachi"
    exit 0
fi
if [ ! -f "$src/build.sh" ] || [ ! -d "$src/source" ]; then
    echo "pachi: no Pachi source at $src (expected build.sh and source/); not built" >&2
    exit 3
fi
for tool in make cc; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "pachi: '$tool' not found; install make and a C compiler to build Pachi" >&2
        exit 3
    fi
done
echo "pachi: building from $src into $out (about 2-4 minutes)" >&2
mkdir -p "$out"
nice -n "${NICE:-10}" sh "$src/build.sh" "$out" > "$out/build.path" 2> "$out/build.log" || {
    echo "pachi: build failed; see $out/build.log" >&2
    exit 1
}
echo "$out/pachi"
