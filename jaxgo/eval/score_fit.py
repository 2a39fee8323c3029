"""Fit the analysis server's score calibration (``jaxgo.learn.score_model``) on the training split; check it on
the test split.

    jaxgo eval score-fit collect --split train --positions 500 --out train.jsonl
    jaxgo eval score-fit collect --split train --kind resigned --positions 500 --position-seed 1 --out train.jsonl
    jaxgo eval score-fit collect --split test --positions 200 --out test.jsonl   (and --kind resigned, seed 1)
    jaxgo eval score-fit fit benchmarks/logs/score_fit_19_train.jsonl.gz --slope constant --write
    jaxgo eval score-fit check benchmarks/logs/score_fit_19_test.jsonl.gz

``collect`` asks one fresh ``jaxgo serve`` (its uncalibrated estimate, ``--score-estimate shrunk``) about one
position per game that ended in a counted score: 19x19, even KGS games (komi 5.5-7.5) of the split's archives
(``split.train_archives()`` / ``split.heldout_archives('kgs2017')``), the same number from each archive, at a move
drawn from 0-200; one JSON row each (the root's ``scoreLead``, the komi, the move number and the game's final
lead).  ``fit`` turns rows into the parameters (least squares; ``--write`` into the shipped
``score_model.json``): the rows are kept, so the fit is reproduced exactly by its command.  ``check`` prints, on
rows of the other split, the error of the raw and of the calibrated lead against the games' final leads.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys

import numpy as np

from jaxgo.data import SkipStats, archives, split
from jaxgo.learn import score_model

MOVES = (0, 200)
MAX_COUNTED = 60.0  # a counted margin beyond this is taken as the winner only (dead stones left on the board)
VISITS = 100
_RESULT = re.compile(r"^\s*([BW])\+(\d+(?:\.\d+)?)\s*$")
_HANDICAP = re.compile(rb"\bHA\[\s*([2-9])")
_SETUP = re.compile(rb"\bA[BW]\[")


def final_lead(result: str | None) -> float | None:
    """Black's final lead after komi from an SGF result ('B+12.5' -> 12.5, 'W+0.5' -> -0.5); None unless counted."""
    found = _RESULT.match(result or "")
    if not found:
        return None
    value = float(found.group(2))
    return value if found.group(1) == "B" else -value


def is_even(data: bytes) -> bool:
    """No handicap stones (no HA >= 2, no AB/AW setup)."""
    return not _HANDICAP.search(data) and not _SETUP.search(data)


def resigned_winner(result: str | None) -> str | None:
    """'B' or 'W' for a game won by resignation ('B+R', 'W+Resign'); None otherwise."""
    found = re.match(r"^\s*([BW])\+R", result or "")
    return found.group(1) if found else None


def counted_samples(paths, count: int, rng: random.Random, window: tuple = MOVES, kind: str = "counted") -> list:
    """About ``count`` positions, the same number from each archive of ``paths``: games with komi 5.5-7.5 and a
    counted result (``kind`` "counted") or won by resignation ("resigned"), one position each at a move drawn
    from ``window`` (the game's moves before it); ``final_lead`` None and ``winner`` for a resigned game."""
    per = -(-count // max(len(paths), 1))
    out = []
    for path in paths:
        taken = 0
        for name, record in archives.iter_archive(path, SkipStats(), accept=is_even):
            lead = final_lead(record.result)
            winner = resigned_winner(record.result)
            if (lead if kind == "counted" else winner) is None:
                continue
            if not 5.5 <= record.komi <= 7.5 or len(record.moves) <= window[0]:
                continue
            number = rng.randint(window[0], min(window[1], len(record.moves) - 1))
            out.append({"id": f"{path.name}:{name.rsplit('/', 1)[-1]}@{number}", "size": record.size,
                        "komi": record.komi, "move": number, "moves": record.gtp_moves()[:number],
                        "final_lead": lead, "winner": winner or ("B" if lead > 0 else "W")})
            taken += 1
            if taken >= per:
                break
    return out[:count]


def collect(server, samples: list[dict], visits: int, emit) -> list[dict]:
    """One row per sample: the server's root ``scoreLead`` (Black's view) at ``visits`` visits, with the sample's
    komi, move number and final lead."""
    from jaxgo.eval.trust import katrain_query

    rows = []
    for s in samples:
        answer = server.ask(katrain_query(s["id"], s["size"], s["komi"], s["moves"], visits, None))
        row = {"id": s["id"], "size": s["size"], "komi": s["komi"], "move": s["move"],
               "lead": answer["rootInfo"]["scoreLead"], "final_lead": s["final_lead"], "winner": s["winner"]}
        rows.append(row)
        emit(row)
    return rows


def read_rows(paths) -> list[dict]:
    """The JSON rows of ``collect`` files, plain or gzip-compressed (``.gz``; lines without a ``lead`` skipped)."""
    rows = []
    for path in paths:
        with (gzip.open(path, "rt") if str(path).endswith(".gz") else open(path)) as f:
            rows += [r for r in (json.loads(line) for line in f if line.strip()) if "lead" in r]
    return rows


def outcomes(rows: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """(final difference before komi float [n], NaN where only the winner counts; Black won bool [n]) of rows:
    resigned games and counted margins over ``MAX_COUNTED`` give the winner only."""
    final = np.array([np.nan if r["final_lead"] is None or abs(r["final_lead"]) > MAX_COUNTED
                      else r["final_lead"] + r["komi"] for r in rows])
    return final, np.array([r["winner"] == "B" for r in rows])


def fit_rows(rows: list[dict], slope: str = "linear") -> dict:
    """{board size: score_model.fit parameters} over the rows of each size."""
    out = {}
    for size in sorted({r["size"] for r in rows}):
        mine = [r for r in rows if r["size"] == size]
        final, black_won = outcomes(mine)
        out[size] = score_model.fit([r["lead"] for r in mine], [r["komi"] for r in mine],
                                    [r["move"] for r in mine], final, black_won, slope)
    return out


def check_rows(rows: list[dict], params: dict) -> dict:
    """Per board size, the raw and the calibrated lead against the games' outcomes: on counted games (margins up
    to ``MAX_COUNTED``) the root-mean-square error, the mean error (bias) and the slope of the final lead on the
    shown lead (1 is calibrated); on all games the share whose winner the lead's sign names."""
    out = {}
    for size in sorted({r["size"] for r in rows}):
        mine = [r for r in rows if r["size"] == size]
        final, black_won = outcomes(mine)
        counted = np.isfinite(final)
        final = final - np.array([r["komi"] for r in mine])
        raw = np.array([r["lead"] for r in mine])
        shown = np.array([float(score_model.calibrate(params.get(size), r["lead"], r["komi"], r["move"]))
                          for r in mine])
        entry = {"positions": len(mine), "counted": int(counted.sum())}
        for name, lead in (("raw", raw), ("calibrated", shown)):
            error = final[counted] - lead[counted]
            entry[name] = {"rmse": round(float(np.sqrt(np.mean(error ** 2))), 2),
                           "bias": round(float(error.mean()), 2),
                           "slope": round(float(np.polyfit(lead[counted], final[counted], 1)[0]), 3),
                           "winner_named": round(float(np.mean((lead > 0) == black_won)), 3)}
        out[size] = entry
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="jaxgo eval score-fit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="action", required=True)
    c = sub.add_parser("collect", help="ask a fresh server about counted games' positions; one JSON row each")
    c.add_argument("--split", choices=("train", "test"), default="train")
    c.add_argument("--positions", type=int, default=500)
    c.add_argument("--visits", type=int, default=VISITS)
    c.add_argument("--seed", type=int, default=1, help="the server's --seed (default 1)")
    c.add_argument("--position-seed", type=int, default=0, help="the positions' draw (default 0)")
    c.add_argument("--kind", choices=("counted", "resigned"), default="counted",
                   help="games that ended in a counted score, or by resignation (default counted)")
    c.add_argument("--out", required=True, help="append the rows to this file")
    f = sub.add_parser("fit", help="least-squares parameters from rows (--write: into the shipped file)")
    f.add_argument("rows", nargs="+")
    f.add_argument("--slope", choices=score_model.SLOPES, default="linear",
                   help="the slope on the search's lead: linear in the move number, constant or one")
    f.add_argument("--write", action="store_true")
    k = sub.add_parser("check", help="raw and calibrated errors against the games' final leads")
    k.add_argument("rows", nargs="+")
    args = parser.parse_args(argv)

    if args.action == "collect":
        from jaxgo.eval.analysis import Server, json_lines

        paths = split.train_archives() if args.split == "train" else split.heldout_archives(which="kgs2017")
        if not paths:
            parser.error(f"no archives of the {args.split} split under the data folder")
        samples = counted_samples(paths, args.positions, random.Random(args.position_seed), kind=args.kind)
        server = Server(["--seed", str(args.seed), "--score-estimate", "shrunk"])
        with open(args.out, "a") as out:
            try:
                collect(server, samples, args.visits, json_lines(out))
            finally:
                server.close()
        return 0
    rows = read_rows(args.rows)
    if args.action == "fit":
        params = fit_rows(rows, args.slope)
        print(json.dumps({str(k): v for k, v in params.items()}))
        if args.write:
            command = f"jaxgo eval score-fit fit {' '.join(args.rows)} --slope {args.slope} --write"
            score_model.save_parameters(params, score_model.PARAMETERS_FILE, command)
            print(f"wrote {score_model.PARAMETERS_FILE}", file=sys.stderr)
        return 0
    print(json.dumps({str(k): v for k, v in check_rows(rows, score_model.load_parameters()).items()}))
    return 0
