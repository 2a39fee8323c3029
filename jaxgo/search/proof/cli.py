"""``jaxgo solve FILE.tst [--solver pns|pp] [--max-nodes N] [--max-seconds S] [--limit K] [--json]``.

Runs the ``attack``/``defend`` lines of a GNU Go regression file and compares with the ``#? [...]`` answers
(only the leading result code is compared; ko codes 2/3 count as success for the expected side only when
the expected code is 1).
"""

from __future__ import annotations

import argparse
import json
import os
import re

from jaxgo.config import Rules
from jaxgo.coords import gtp_to_point
from jaxgo.sgf import load_sgf, replay

from .capture import solve_capture
from .gtp_commands import game_board


def parse_tst(path):
    cases, current = [], None
    pending = None
    with open(path) as fh:
        for line in fh:
            line = line.strip()
            m = re.match(r"loadsgf\s+(\S+)(?:\s+(\d+))?", line)
            if m:
                current = (m.group(1), int(m.group(2)) if m.group(2) else None)
                continue
            m = re.match(r"(\d+)\s+(attack|defend)\s+(\S+)", line)
            if m and current:
                pending = dict(id=int(m.group(1)), cmd=m.group(2), vertex=m.group(3), sgf=current[0],
                               move=current[1])
                continue
            m = re.match(r"#\?\s*\[(.*)\]", line)
            if m and pending:
                pending["expected"] = m.group(1)
                cases.append(pending)
                pending = None
    return cases


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="jaxgo solve")
    ap.add_argument("file")
    ap.add_argument("--solver", default="pns", choices=["pns", "pp"])
    ap.add_argument("--max-nodes", type=int, default=20000)
    ap.add_argument("--max-seconds", type=float, default=10.0)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    base = os.path.dirname(os.path.abspath(a.file))
    cases = parse_tst(a.file)
    if a.limit:
        cases = cases[: a.limit]
    rows = []
    for case in cases:
        row = dict(case)
        try:
            rec = load_sgf(os.path.join(base, case["sgf"]))
            game = replay(rec, Rules(size=rec.size), case["move"])
            board = game_board(game)
            point = gtp_to_point(case["vertex"], game.size)
            res, L = solve_capture(board, point, case["cmd"] == "attack", a.solver,
                                   max_nodes=a.max_nodes, max_seconds=a.max_seconds)
            ok = (res.value is True) if case["cmd"] == "attack" else (res.value is False)
            got = "1" if ok else "0"
            exp = case["expected"].lstrip("!&").strip()[:1]
            row.update(got=got, agree=(got == exp) if exp in "01" else None, nodes=res.nodes,
                       seconds=round(res.seconds, 3), L=L, unknown=res.value is None)
        except Exception as exc:  # noqa: BLE001
            row.update(error=str(exc), agree=None)
        rows.append(row)
        if not a.json:
            print(f"{row['id']:4d} {row['cmd']} {row['vertex']:4s} exp [{row['expected']}] got {row.get('got')} "
                  f"agree={row.get('agree')} nodes={row.get('nodes')} t={row.get('seconds')} {row.get('error', '')}")
    scored = [r for r in rows if r.get("agree") is not None]
    summary = dict(tests=len(rows), scored=len(scored), agree=sum(r["agree"] for r in scored))
    if a.json:
        print(json.dumps(dict(summary=summary, rows=rows)))
    else:
        print(f"agreement {summary['agree']}/{summary['scored']} (tests {summary['tests']})")
    return 0
