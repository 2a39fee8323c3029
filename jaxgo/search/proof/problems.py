"""Capture problem sets for the learning experiments (all with a TRUE answer, as in the paper's sec. 5).

Two sources, both read in place from ``../shared/data/problems``:

- ``tesuji_problems``: sanderland/tsumego, Lee Changho's tesuji books "1. Fighting And Capturing",
  "2. Snapback And Shortage Of Liberties", "4. Net And Squeeze Tactics" (369 problems).  The attacker is the
  side of the first solution move; the goal is an opponent string within distance 2 of that move with at most
  4 liberties which a reference PNS search (``verify_nodes`` node budget) proves capturable by the attacker
  moving first, and which is not already TRUE at the root (in atari or a working ladder); the first such
  string (fewest liberties first) is taken.
- ``regression_problems``: the ``attack`` tests of GNU Go's reading.tst / capture.tst whose expected code is 1.

A problem is a dict: name, size, stones (flat list, 1 black, -1 white), to_play, goal (flat point).
"""

from __future__ import annotations

import json
import os

from .board import BLACK, WHITE, Board
from .capture import CaptureProblem, solve_capture

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "shared", "data", "problems")
TESUJI_COLLECTIONS = ("1. Fighting And Capturing", "2. Snapback And Shortage Of Liberties",
                      "4. Net And Squeeze Tactics")


def data_dir() -> str:
    env = os.environ.get("JAXGO_PROBLEMS")
    if env:
        return env
    return os.path.normpath(DATA)


def _sgf_point(s: str, size: int) -> int:
    return (ord(s[1]) - 97) * size + (ord(s[0]) - 97)


def problem_board(p: dict) -> Board:
    return Board(p["size"], p["stones"], p["to_play"])


def _candidate_goals(b: Board, move: int, attacker: int, max_libs: int = 4) -> list[int]:
    size = b.size
    mr, mc = divmod(move, size)
    seen, out = set(), []
    for q, v in enumerate(b.stones):
        if v != -attacker or q in seen:
            continue
        pts, libs = b.chain(q)
        seen |= pts
        near = any(abs(divmod(x, size)[0] - mr) + abs(divmod(x, size)[1] - mc) <= 2 for x in pts)
        if near and len(libs) <= max_libs:
            out.append((len(libs), -len(pts), min(pts)))
    return [q for _, _, q in sorted(out)]


def tesuji_problems(limit: int | None = None, verify_nodes: int = 3000, verify_seconds: float = 3.0,
                    path: str | None = None) -> list[dict]:
    """Build capture problems from the tesuji collections (see module doc); problems without a verified goal
    (and unreadable lines) are skipped — compare ``len`` of the result with the 369 sources."""
    path = path or os.path.join(data_dir(), "sanderland-tsumego", "problems.jsonl")
    out = []
    with open(path) as fh:
        for line in fh:
            try:
                d = json.loads(line)
            except json.JSONDecodeError:
                continue
            if d.get("collection") not in TESUJI_COLLECTIONS or not d.get("SOL"):
                continue
            size = int(d.get("SZ", 19))
            stones = [0] * (size * size)
            for key, colour in (("AB", BLACK), ("AW", WHITE)):
                for s in d.get(key, []):
                    stones[_sgf_point(s, size)] = colour
            colour = BLACK if d["SOL"][0][0] == "B" else WHITE
            move = _sgf_point(d["SOL"][0][1], size)
            b = Board(size, stones, colour)
            for goal in _candidate_goals(b, move, colour):
                root = CaptureProblem(goal, colour, 2)
                if root.evaluate(b) is not None:
                    continue
                res, _ = solve_capture(b, goal, True, "pns", max_nodes=verify_nodes, max_seconds=verify_seconds)
                if res.value is True:
                    out.append(dict(name=f"{d['collection'][:2].strip('. ')}-{d['file']}", size=size,
                                    stones=stones, to_play=colour, goal=goal, solution=move))
                    break
            if limit and len(out) >= limit:
                break
    return out


def regression_problems(files=("reading.tst", "capture.tst")) -> list[dict]:
    """``attack`` tests with expected code 1 from GNU Go's regression files."""
    from jaxgo.coords import gtp_to_point

    from .cli import case_board, expectation, parse_tst

    base = os.path.join(data_dir(), "gnugo-regression", "regression")
    out = []
    for f in files:
        for case in parse_tst(os.path.join(base, f)):
            _, neg, fails, code = expectation(case["expected"])
            if case["cmd"] != "attack" or code != 1 or neg or fails:
                continue
            try:
                b = case_board(case, base)
            except Exception:  # noqa: BLE001 - unreadable record: skipped
                continue
            goal = gtp_to_point(case["vertex"], b.size)
            if b.stones[goal] == 0:
                continue
            out.append(dict(name=f"{f}:{case['id']}", size=b.size, stones=list(b.stones), to_play=-b.stones[goal],
                            goal=goal))
    return out

