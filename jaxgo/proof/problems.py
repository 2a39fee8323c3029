"""Capture problem sets for the learning experiments (all with a TRUE answer, as in the paper's sec. 5).

Sources, all read in place from ``problems`` in the shared data folder (``jaxgo.util.paths.data_dir()``; see its
README for the repositories and commits):

- ``tesuji_problems``: sanderland/tsumego tesuji collections (``TESUJI_COLLECTIONS``: Lee Changho's tesuji books
  "1. Fighting And Capturing", "2. Snapback And Shortage Of Liberties", "4. Net And Squeeze Tactics", and with
  ``EXTRA_COLLECTIONS`` also Kobayashi Satoru's "105 Basic Tesuji", the Segoe tesuji dictionary, the "Attack" /
  "Capturing Race" / "Escape" sections and "Moves To Attack And Protect").  The attacker is the side of the first
  solution move; the goal is an opponent string within distance 2 of that move with at most 4 liberties which is
  not already TRUE at the root (in atari or a working ladder) and which a reference PNS search (``verify_nodes``
  budget) proves capturable by the attacker moving first; with ``check_solution`` the book's first move must
  also work against it (after that move the defender, moving first, cannot save the string within the same
  budget).  The first such string (fewest liberties first) is taken.
- ``regression_problems``: GNU Go regression tests on tactical reading (``READING_FILES``): ``attack`` tests
  whose expected code is 1, and with ``defend_zero`` the ``defend`` tests whose expected code is 0 (the string
  cannot be saved even with the defender moving first, so the attacker moving first captures it; the problem
  is posed with the attacker to move).  With ``gnugo_fails`` the tests GNU Go itself fails (``]*``) are
  included: their expectation is the suite author's answer, GNU Go merely does not find it.
- ``all_problems``: both, duplicates (the same position and goal string up to the 8 board symmetries) removed.

Train/test separation: ``split_of`` assigns every problem to "test" when a hash of its canonical position (the
position and goal string, minimised over the 8 symmetries) is 0 mod 3, else to "train"; a position therefore
lands in the same split whatever collection or test file it comes from and however the set grows.

A problem is a dict: name, source, size, stones (flat list, 1 black, -1 white), to_play, goal (flat point),
split.
"""

from __future__ import annotations

import hashlib
import json
import os

from jaxgo.go.hostboard import BLACK, WHITE, Board
from jaxgo.proof.capture import CaptureProblem, solve_capture
from jaxgo.util.paths import data_dir

TESUJI_COLLECTIONS = ("1. Fighting And Capturing", "2. Snapback And Shortage Of Liberties",
                      "4. Net And Squeeze Tactics")
EXTRA_COLLECTIONS = ("Kobayashi Satoru 105 Basic Tesuji For 1~3 Dan", "6.2 Attack", "5.5 Attack",
                     "6.1 Capturing Race", "5.6 Escape", "Moves To Attack And Protect - Elementary",
                     "Moves To Attack And Protect - Intermediate", "Moves To Attack And Protect - Advanced",
                     "Go Seigen - Segoe Tesuji Dictionary")
READING_FILES = ("reading.tst", "capture.tst", "trevor.tst", "trevorc.tst", "trevord.tst", "nando.tst",
                 "nngs.tst", "auto03.tst")


def problems_dir() -> str:
    """The problem sets folder: ``$JAXGO_PROBLEMS``, else ``problems`` in ``jaxgo.util.paths.data_dir()``."""
    env = os.environ.get("JAXGO_PROBLEMS")
    if env:
        return env
    return os.path.normpath(data_dir() / "problems")


def _sgf_point(s: str, size: int) -> int:
    return (ord(s[1]) - 97) * size + (ord(s[0]) - 97)


def problem_board(p: dict) -> Board:
    return Board(p["size"], p["stones"], p["to_play"])


def _symmetries(size: int):
    """The 8 maps (r, c) -> (r', c') of the square board."""
    n = size - 1
    return (lambda r, c: (r, c), lambda r, c: (c, n - r), lambda r, c: (n - r, n - c), lambda r, c: (n - c, r),
            lambda r, c: (r, n - c), lambda r, c: (n - r, c), lambda r, c: (c, r), lambda r, c: (n - c, n - r))


def canonical_key(p: dict) -> str:
    """Hex digest of the problem's position and goal string, minimised over the 8 symmetries (colours and the
    side to move are kept: the attacker is always the opponent of the goal string)."""
    size, stones = p["size"], p["stones"]
    goal_pts, _ = Board(size, stones).chain(p["goal"])
    best = None
    for f in _symmetries(size):
        out = [0] * (size * size)
        for q, v in enumerate(stones):
            if v:
                r, c = f(*divmod(q, size))
                out[r * size + c] = 2 if q in goal_pts else v
        text = f"{size}:" + "".join("xo.g"[{1: 0, -1: 1, 0: 2, 2: 3}[v]] for v in out)
        best = text if best is None or text < best else best
    return hashlib.sha1(best.encode()).hexdigest()


def split_of(p: dict) -> str:
    """"test" for one problem in three (by the canonical position hash), else "train"."""
    return "test" if int(canonical_key(p)[:8], 16) % 3 == 0 else "train"


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


def _solution_works(b: Board, move: int, goal: int, nodes: int, seconds: float) -> bool:
    """After the book's first move, can the defender (to move) no longer save the goal string?"""
    after = b.play(move)
    if after is None:
        return False
    if after.stones[goal] == 0:
        return True
    res, _ = solve_capture(after, goal, False, "pns", max_nodes=nodes, max_seconds=seconds)
    return res.value is True


def tesuji_problems(limit: int | None = None, verify_nodes: int = 3000, verify_seconds: float = 3.0,
                    path: str | None = None, collections=TESUJI_COLLECTIONS, check_solution: bool = False,
                    per_collection: int | None = None) -> list[dict]:
    """Build capture problems from tesuji collections (see module doc); problems without a verified goal
    (and unreadable lines) are skipped — compare ``len`` of the result with the number of sources.
    ``per_collection`` caps the records *read* from each collection (not the problems kept)."""
    path = path or os.path.join(problems_dir(), "sanderland-tsumego", "problems.jsonl")
    out, read = [], {}
    with open(path) as fh:
        for line in fh:
            try:
                d = json.loads(line)
            except json.JSONDecodeError:
                continue
            coll = d.get("collection")
            if coll not in collections or not d.get("SOL"):
                continue
            read[coll] = read.get(coll, 0) + 1
            if per_collection and read[coll] > per_collection:
                continue
            try:
                size = int(d.get("SZ", 19))
                stones = [0] * (size * size)
                for key, colour in (("AB", BLACK), ("AW", WHITE)):
                    for s in d.get(key, []):
                        stones[_sgf_point(s, size)] = colour
                colour = BLACK if d["SOL"][0][0] == "B" else WHITE
                move = _sgf_point(d["SOL"][0][1], size)
            except (ValueError, IndexError, TypeError):
                continue
            if not 0 <= move < size * size or stones[move] != 0:
                continue
            b = Board(size, stones, colour)
            for goal in _candidate_goals(b, move, colour):
                if CaptureProblem(goal, colour, 4).evaluate(b) is True:   # already in atari / a working ladder
                    continue
                res, _ = solve_capture(b, goal, True, "pns", max_nodes=verify_nodes, max_seconds=verify_seconds)
                if res.value is not True:
                    continue
                if check_solution and not _solution_works(b, move, goal, verify_nodes, verify_seconds):
                    continue
                tag = coll[:2].strip(". ") if coll in TESUJI_COLLECTIONS else \
                    "".join(w[0] for w in coll.replace("-", " ").split() if w[0].isalnum())
                p = dict(name=f"{tag}-{d['file']}", source=f"tsumego:{coll}", size=size, stones=stones,
                         to_play=colour, goal=goal, solution=move)
                p["split"] = split_of(p)
                out.append(p)
                break
            if limit and len(out) >= limit:
                break
    return out


def regression_problems(files=("reading.tst", "capture.tst"), gnugo_fails: bool = False,
                        defend_zero: bool = False) -> list[dict]:
    """Capture problems (attacker to move, answer TRUE) from GNU Go's regression files (see module doc).
    Defaults give the original set: ``attack`` tests with expected code 1 that GNU Go passes."""
    from jaxgo.go.coords import gtp_to_point
    from jaxgo.proof.regression import case_board, expectation, parse_tst

    base = os.path.join(problems_dir(), "gnugo-regression", "regression")
    out = []
    for f in files:
        full = os.path.join(base, f)
        if not os.path.exists(full):
            continue
        for case in parse_tst(full):
            _, neg, fails, code = expectation(case["expected"])
            if neg or (fails and not gnugo_fails):
                continue
            if case["cmd"] == "attack" and code == 1:
                source = "gnugo:attack"
            elif case["cmd"] == "defend" and code == 0 and defend_zero:
                source = "gnugo:defend0"
            else:
                continue
            try:
                b = case_board(case, base)
            except Exception:  # noqa: BLE001 - unreadable record: skipped
                continue
            goal = gtp_to_point(case["vertex"], b.size)
            if b.stones[goal] == 0:
                continue
            p = dict(name=f"{f}:{case['id']}", source=source + ("*" if fails else ""), size=b.size,
                     stones=list(b.stones), to_play=-b.stones[goal], goal=goal)
            p["split"] = split_of(p)
            out.append(p)
    return out


def dedupe(problems) -> list[dict]:
    """Drop problems whose canonical position (``canonical_key``) was seen earlier in the list."""
    seen, out = set(), []
    for p in problems:
        k = canonical_key(p)
        if k not in seen:
            seen.add(k)
            out.append(p)
    return out


def all_problems(verify_nodes: int = 3000, verify_seconds: float = 3.0, extra: bool = True,
                 per_collection: int | None = None, log=None) -> list[dict]:
    """The full learning set: GNU Go regression problems (all reading files, defend-0 tests and GNU Go's own
    failures included), the Lee Changho tesuji books, and with ``extra`` the other tesuji collections (book
    move checked); duplicates removed."""
    probs = regression_problems(READING_FILES, gnugo_fails=True, defend_zero=True)
    if log:
        log(f"GNU Go regression: {len(probs)}")
    probs += tesuji_problems(verify_nodes=verify_nodes, verify_seconds=verify_seconds)
    if log:
        log(f"+ Lee Changho tesuji books: {len(probs)}")
    if extra:
        probs += tesuji_problems(verify_nodes=verify_nodes, verify_seconds=verify_seconds,
                                 collections=EXTRA_COLLECTIONS, check_solution=True, per_collection=per_collection)
        if log:
            log(f"+ other tesuji collections: {len(probs)}")
    return dedupe(probs)
