"""``jaxgo solve FILE.tst [--solver pns|pp] [--max-nodes N] [--max-seconds S] [--limit K] [--ids ...] [--no-ko]
[--json]``, ``jaxgo solve mine ...`` (``mining.py``) and ``jaxgo solve learn ...`` (``experiment.py``).

Runs the ``attack``/``defend`` lines of a GNU Go regression file (``loadsgf``, ``trymove``/``popgo`` handled)
and compares the answer (``1 MOVE``, ``2 MOVE``, ``3 MOVE`` or ``0``) with the ``#? [...]`` expectation, a
regular expression matched against the whole answer as GNU Go's regression does (a leading ``!`` negates).

Scoring categories per test: ``gnugo_fails`` (the expectation ends with ``*``: GNU Go itself fails it),
``ko`` (the expected code is 2 or 3), otherwise ``plain``.  The summary reports, for the plain tests, the
agreement of the result code (``agree_code``) and of the full answer including the move (``agree_full``),
and the same counts for ko tests.
"""

from __future__ import annotations

import argparse
import json
import os

from jaxgo.go.coords import gtp_to_point, point_to_gtp
from jaxgo.proof.capture import solve_capture_ko
from jaxgo.proof.regression import answer_matches, case_board, expectation, parse_tst


def run_case(case, base: str, solver: str = "pns", max_nodes: int = 1000, max_seconds: float = 1.0,
             ko: bool = True, prior=None) -> dict:
    row = dict(case)
    board = case_board(case, base)
    point = gtp_to_point(case["vertex"], board.size)
    if board.stones[point] == 0:
        raise ValueError("goal point is empty")
    code, move, nodes, secs, L = solve_capture_ko(board, point, case["cmd"] == "attack", solver,
                                                  max_nodes=max_nodes, max_seconds=max_seconds,
                                                  codes=(1, 2, 3) if ko else (1,), prior=prior)
    if code == 0:
        answer = "0"
    else:
        answer = f"{code} {point_to_gtp(move, board.size).upper()}" if move is not None else f"{code} PASS"
    _, _, fails, exp_code = expectation(case["expected"])
    row.update(answer=answer, code=code, nodes=nodes, seconds=round(secs, 3), L=L,
               category="gnugo_fails" if fails else "ko" if exp_code in (2, 3) else "plain",
               agree_full=answer_matches(answer, case["expected"]),
               agree_code=(code == exp_code) if exp_code is not None else None)
    return row


def summarize(rows) -> dict:
    out = dict(tests=len(rows), errors=sum("error" in r for r in rows))
    for cat in ("plain", "ko", "gnugo_fails"):
        rs = [r for r in rows if r.get("category") == cat]
        out[cat] = dict(n=len(rs), agree_code=sum(bool(r["agree_code"]) for r in rs),
                        agree_full=sum(bool(r["agree_full"]) for r in rs))
    out["nodes"] = sum(r.get("nodes", 0) for r in rows)
    out["seconds"] = round(sum(r.get("seconds", 0.0) for r in rows), 3)
    return out


def mine_main(argv) -> int:
    """``jaxgo solve mine --split train|test --games N --out FILE.jsonl``: mine capture problems (resumable);
    ``jaxgo solve mine --stats FILE`` prints a mined file's statistics."""
    from jaxgo.proof.mining import file_stats, mine

    ap = argparse.ArgumentParser(prog="jaxgo solve mine", description="mine capture problems from the archives")
    ap.add_argument("--split", choices=["train", "test"])
    ap.add_argument("--games", type=int, help="new games to process (done games are skipped)")
    ap.add_argument("--out", help="JSON-lines file, appended to (OUT.games lists done games)")
    ap.add_argument("--stats", default="", help="only print the statistics of this mined file (.jsonl[.gz])")
    ap.add_argument("--every", type=int, default=8, help="sample a position every N moves")
    ap.add_argument("--start", type=int, default=20, help="first sampled move number")
    ap.add_argument("--per-game", type=int, default=30, help="at most this many problems per game")
    ap.add_argument("--max-nodes", type=int, default=12000, help="PNS node budget (difficulty, cross-check)")
    ap.add_argument("--max-seconds", type=float, default=20.0, help="PNS time budget per problem")
    ap.add_argument("--max-l", type=int, default=5, help="largest liberty limit L of the PNS")
    ap.add_argument("--stride", type=int, default=1, help="take every N-th game of the split")
    ap.add_argument("--skip", type=int, default=0, help="skip the first N games of the split")
    ap.add_argument("--no-progress", action="store_true")
    a = ap.parse_args(argv)
    if a.stats:
        print(json.dumps(file_stats(a.stats)))
        return 0
    if not (a.split and a.games is not None and a.out):
        ap.error("--split, --games and --out are required for mining")
    result = mine(a.split, a.games, a.out, every=a.every, start=a.start, per_game=a.per_game,
                  max_nodes=a.max_nodes, max_seconds=a.max_seconds, max_l=a.max_l, skip=a.skip, stride=a.stride,
                  progress=not a.no_progress)
    print(json.dumps(result))
    return 0


DESCRIPTION = """Proof-number search on the attack/defend tests of GNU Go regression files.

  jaxgo solve FILE.tst [FILE.tst ...] [options]   run the tests, compare with their #? expectations
  jaxgo solve mine ...                           mine capture problems from the game archives
                                                 (`jaxgo solve mine --help`)
  jaxgo solve learn ...                          the learned-prior experiment on mined problems
                                                 (`jaxgo solve learn --help`)
"""

EPILOG = """Each test line `N attack|defend VERTEX` after a `loadsgf` is solved and its answer (`1 MOVE`, `2 MOVE`,
`3 MOVE` or `0`) matched against the `#? [...]` line below it.  The summary counts plain tests, ko tests and
tests GNU Go itself fails.  A file that cannot be read, or that holds no test, is an error (exit 1)."""


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="jaxgo solve", description=DESCRIPTION, epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="+", help="GNU Go regression files (.tst); their loadsgf paths are relative "
                                            "to the file's folder")
    ap.add_argument("--solver", default="pns", choices=["pns", "pp"],
                    help="proof-number search or proof-and-disproof-number search (default pns)")
    ap.add_argument("--max-nodes", type=int, default=1000, help="node budget per test (default 1000)")
    ap.add_argument("--max-seconds", type=float, default=1.0, help="time budget per test (default 1 s)")
    ap.add_argument("--limit", type=int, default=0, help="at most this many tests per file (0: all)")
    ap.add_argument("--ids", type=int, nargs="*", default=None, help="only these test ids")
    ap.add_argument("--no-ko", action="store_true", help="answer only codes 0/1 (no ko searches)")
    ap.add_argument("--json", action="store_true", help="one JSON object: summary and rows")
    return ap


def read_cases(path: str) -> list:
    """The tests of one regression file; ValueError (a one-line message) for a missing file, a folder, an
    unreadable file or one without any attack/defend test."""
    if os.path.isdir(path):
        raise ValueError(f"{path} is a folder (give the .tst files in it)")
    try:
        cases = parse_tst(path)
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not cases:
        raise ValueError(f"{path} holds no attack/defend test (a GNU Go regression .tst file is expected)")
    return cases


def main(argv=None) -> int:
    import sys

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "mine":
        return mine_main(argv[1:])
    if argv and argv[0] == "learn":
        from jaxgo.proof.experiment import main as learn_main

        return learn_main(argv[1:])
    a = build_parser().parse_args(argv)
    if a.max_nodes < 1 or not a.max_seconds > 0 or a.limit < 0:
        print("jaxgo solve: --max-nodes must be at least 1, --max-seconds > 0 and --limit >= 0", file=sys.stderr)
        return 2
    try:
        files = [(path, read_cases(path)) for path in a.file]
    except ValueError as exc:
        print(f"jaxgo solve: {exc}", file=sys.stderr)
        return 1
    rows = []
    for path, cases in files:
        base = os.path.dirname(os.path.abspath(path))
        if a.ids:
            cases = [c for c in cases if c["id"] in a.ids]
        if a.limit:
            cases = cases[: a.limit]
        for case in cases:
            try:
                row = run_case(case, base, a.solver, a.max_nodes, a.max_seconds, ko=not a.no_ko)
            except Exception as exc:  # noqa: BLE001 - reported per test, the run goes on
                row = dict(case, error=f"{type(exc).__name__}: {exc}", category="error")
            row["file"] = os.path.basename(path)
            rows.append(row)
            if not a.json:
                print(f"{row['file']}:{row['id']:<4d} {row['cmd']} {row['vertex']:4s} exp [{row['expected']}] "
                      f"got [{row.get('answer')}] {row['category']} full={row.get('agree_full')} "
                      f"nodes={row.get('nodes')} t={row.get('seconds')} {row.get('error', '')}", flush=True)
    summary = summarize(rows)
    if a.json:
        print(json.dumps(dict(summary=summary, rows=rows)))
    else:
        p = summary["plain"]
        print(f"plain tests (not ko, not GNU Go failures): code {p['agree_code']}/{p['n']}, "
              f"answer incl. move {p['agree_full']}/{p['n']}; ko tests: {summary['ko']}; "
              f"GNU Go failures: {summary['gnugo_fails']}; errors {summary['errors']}; "
              f"nodes {summary['nodes']} in {summary['seconds']} s")
    return 0
