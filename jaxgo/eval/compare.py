"""Before/after check of a change: playout speed and gammas accuracy of two revisions, measured in one run.

    jaxgo eval compare --before f9986a8 [--after WORKTREE] [--rounds 3] [--games ARCHIVE]

The ``--before`` revision is checked out into a temporary git worktree and imported from there (``PYTHONPATH``),
the ``--after`` code is this checkout (or another folder).  Playout throughput (``jaxgo bench playouts --size 9
19 --json``) is timed in alternating rounds (before, after, before, after, ...) so that a changing load on a
shared machine affects both alike, and the best of the rounds is compared; top-1 move prediction of the shipped
gammas (``jaxgo gammas eval --json``) is deterministic and run once each.  Prints one JSON line per measurement
and a ``summary`` line with the ratios (after / before).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # the checkout this module is in


def jaxgo_json(code_dir: Path, args: list[str]) -> list[dict]:
    """The JSON lines printed by ``python -m jaxgo ARGS`` run from the code in ``code_dir``."""
    env = dict(os.environ, PYTHONPATH=str(code_dir), JAX_PLATFORMS=os.environ.get("JAX_PLATFORMS", "cpu"))
    out = subprocess.run([sys.executable, "-m", "jaxgo", *args], env=env, cwd=tempfile.gettempdir(),
                         capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def best_playouts(records: list[dict]) -> dict:
    """size -> best jaxgo playouts/s of one benchmark run."""
    best = {}
    for record in records:
        if record.get("system") == "jaxgo":
            best[record["size"]] = max(best.get(record["size"], 0.0), record["playouts_per_s"])
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="jaxgo eval compare", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, help="git revision of the 'before' code")
    parser.add_argument("--after", default=str(REPO), help="folder of the 'after' code (default: this checkout)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating benchmark rounds (default 3)")
    parser.add_argument("--games", default=None,
                        help="archive for the gammas evaluation (default: the KGS 2017 test archive in the data dir)")
    parser.add_argument("--limit", type=int, default=20, help="games of the archive evaluated (default 20)")
    args = parser.parse_args(argv)
    games = args.games
    if games is None:
        from jaxgo.util.paths import data_dir

        games = str(data_dir() / "games" / "kgs-highdan" / "KGS-2017_01-19-733-.tar.gz")
    with tempfile.TemporaryDirectory() as tmp:
        before_dir = Path(tmp) / "before"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(before_dir), args.before],
                       check=True, capture_output=True)
        try:
            code = {"before": before_dir, "after": Path(args.after)}
            bench_args = ["bench", "playouts", "--size", "9", "19", "--repeats", "3", "--json"]
            best = {"before": {}, "after": {}}
            for round_index in range(args.rounds):
                for label in ("before", "after"):
                    for size, rate in best_playouts(jaxgo_json(code[label], bench_args)).items():
                        print(json.dumps({"measure": "playouts_per_s", "code": label, "round": round_index,
                                          "size": size, "value": rate}), flush=True)
                        best[label][size] = max(best[label].get(size, 0.0), rate)
            accuracy = {}
            for label in ("before", "after"):
                result = jaxgo_json(code[label], ["gammas", "eval", "--games", games, "--limit", str(args.limit),
                                                  "--json"])[-1]
                accuracy[label] = result
                print(json.dumps({"measure": "gammas_eval", "code": label, **result}), flush=True)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(before_dir)],
                           capture_output=True)
    summary = {"summary": True, "before": args.before, "load_1min": round(os.getloadavg()[0], 2)}
    for size in sorted(best["after"]):
        summary[f"playouts_per_s_{size}x{size}"] = {k: best[k].get(size) for k in ("before", "after")}
        summary[f"ratio_{size}x{size}"] = round(best["after"][size] / best["before"][size], 3)
    keys = [k for k, v in accuracy["after"].items() if isinstance(v, (int, float))]
    summary["gammas"] = {k: {"before": accuracy["before"].get(k), "after": accuracy["after"].get(k)} for k in keys}
    print(json.dumps(summary), flush=True)
    return 0

