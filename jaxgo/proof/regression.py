"""GNU Go regression files (``.tst``): test cases, their ``#? [...]`` expectations, and the position of a case.

A case is the ``attack``/``defend`` line of a test with the ``loadsgf`` position and the ``trymove``/``popgo``
moves in force; the expectation is a regular expression matched against the whole answer as GNU Go's regression
does (a leading ``!`` negates, a trailing ``*`` marks a test GNU Go itself fails).
"""

from __future__ import annotations

import functools
import os
import re

from jaxgo.go.config import Rules
from jaxgo.go.coords import gtp_to_point
from jaxgo.go.hostboard import game_board
from jaxgo.go.sgf import load_sgf, replay

_COLOURS = {"b": 1, "black": 1, "w": -1, "white": -1}


def parse_tst(path):
    """Test cases of a .tst file: dicts id, cmd, vertex, sgf, move, expected, tries (list of (colour, vertex)).

    ``tries`` holds the moves played on top of the loaded position: ``trymove`` (undone by ``popgo``) and the
    GTP ``play COLOUR VERTEX`` / ``black VERTEX`` / ``white VERTEX`` lines (kept until the next ``loadsgf``).
    Bytes that are not UTF-8 (comments in Latin-1) are replaced."""
    cases, current, tries = [], None, []
    pending = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.strip()
            m = re.match(r"loadsgf\s+(\S+)(?:\s+(\d+))?", line)
            if m:
                current = (m.group(1), int(m.group(2)) if m.group(2) else None)
                tries = []
                continue
            m = re.match(r"trymove\s+(\S+)\s+(\S+)", line) or re.match(r"play\s+(\S+)\s+(\S+)", line) \
                or re.match(r"(black|white)\s+([A-Za-z]\d+|pass)\s*$", line, re.I)
            if m:
                tries.append((_COLOURS.get(m.group(1).lower(), 0), m.group(2)))
                continue
            if line.startswith("popgo"):
                if tries:
                    tries.pop()
                continue
            m = re.match(r"(\d+)\s+(attack|defend)\s+(\S+)", line)
            if m and current:
                pending = dict(id=int(m.group(1)), cmd=m.group(2), vertex=m.group(3), sgf=current[0],
                               move=current[1], tries=list(tries))
                continue
            m = re.match(r"#\?\s*\[(.*)\]", line)
            if m and pending:
                pending["expected"] = m.group(1) + ("*" if line.rstrip().endswith("*") else "")
                cases.append(pending)
                pending = None
    return cases


def expectation(expected: str):
    """(pattern, negated, gnugo_fails, expected_code or None) from the text inside ``#? [...]``."""
    text = expected.strip()
    fails = text.endswith("*")
    text = text.rstrip("*").strip()
    neg = text.startswith("!")
    pat = text.lstrip("!&").strip()
    m = re.match(r"\(?\s*([0-3])", pat)
    code = int(m.group(1)) if m else None
    return pat, neg, fails, code


def answer_matches(answer: str, expected: str) -> bool:
    pat, neg, _, _ = expectation(expected)
    try:
        ok = re.fullmatch(pat, answer) is not None
    except re.error:
        ok = answer == pat
    return ok != neg


@functools.lru_cache(maxsize=64)
def _loaded_board(path: str, move):
    rec = load_sgf(path)
    return game_board(replay(rec, Rules(size=rec.size), move))


def case_board(case, base: str):
    """Host board of a test case: the SGF replayed to its move number (cached), then its ``trymove``s."""
    board = _loaded_board(os.path.abspath(os.path.join(base, case["sgf"])), case["move"]).copy()
    for colour, vertex in case.get("tries", []):
        if colour and board.to_play != colour:
            board.to_play, board.ko = colour, -1
        point = board.size * board.size if vertex.lower() == "pass" else gtp_to_point(vertex, board.size)
        nxt = board.play(point)
        if nxt is None:
            raise ValueError(f"illegal trymove {vertex}")
        board = nxt
    return board
