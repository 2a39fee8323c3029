"""Quality of engines' moves scored by GNU Go: a quick proxy for strength between full match series.

    jaxgo eval move-quality --sgf benchmarks/games/sgf_19x19_time.tar.xz --records 8 --moves 10 30 50 70 \\
        --engine "defaults=jaxgo gtp --quiet --size 19 --seed 7 --seconds 10 --resign-threshold 0" \\
        --engine "widening=jaxgo gtp --quiet --size 19 --seed 7 --seconds 10 --resign-threshold 0 \\
                  --search-option widen_playouts=40" \\
        --policy --parallel 2 --out /tmp/move_quality.jsonl

Positions: every game record of ``--sgf`` (SGF files, folders of them, or tars of such folders, as
``jaxgo eval strength run --sgf-dir`` writes them; ``--records N``: the first N by name) set up after each of
``--moves`` moves (records too short are skipped).  GNU Go (``--level``, default 10) gives its ``reg_genmove``
choice and ``top_moves`` (up to ten moves with its move values) for every position, once, kept in ``--reference``
(a JSONL cache, resumable).  Every ``--engine NAME=COMMAND`` (a GTP engine) is asked ``reg_genmove``
(``genmove`` if it lacks it) in every position; ``--policy`` adds jaxgo's move model alone (the likeliest move of
the model behind the default engine's priors, no search).  A move scores GNU Go's value of it over the value of
GNU Go's best move (0 for a move outside its list).

Prints one JSON line per engine: ``positions``, ``top1`` (GNU Go's first choice), ``top10`` (in its list),
``record`` (the record's own next move: in professional or high-dan games, the engine's move prediction),
``mean_ratio`` with its 95% interval (normal approximation), and for every engine after the first the paired
difference to the first (``diff_vs``, ``diff_ci95``).  ``--out`` keeps the per-position rows; ``--parallel N``
evaluates N engines at once, one CPU share each (``jaxgo.match.CpuShares``).  A proxy, not a match: GNU Go's
values rate moves by its own knowledge, and strength claims come from ``jaxgo eval strength``.

``--judge pachi`` rates the moves by Pachi (built by ``scripts/pachi.sh``) instead, where GNU Go's values are too
coarse (9x9): a move's value is the mover's win rate after it, one minus the win rate of Pachi's own search of
the reply at ``--judge-playouts`` playouts (``pachi-result``, resignation off), and Pachi's choice in the
position is valued the same way; an engine's move scores its ``loss``, the choice's value minus its own (about
0 for a move as good as Pachi's, noisy at the judge's playouts).  Each (position, move) is searched once and kept
in the cache (``--reference``).  The JSON lines then give ``mean_loss`` and its interval, and ``top1`` counts
Pachi's choice.

    jaxgo eval move-quality --judge pachi --judge-playouts 20000 --sgf benchmarks/games/sgf_9x9_pachi_1202.tar.xz \
        --moves 16 24 32 --records 60 --engine "defaults=jaxgo gtp --quiet --size 9 --playouts 2000 \
        --resign-threshold 0" --engine "large=... --prior-model large" --out /tmp/mq.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from jaxgo.eval.series import PACHI_MIN_PLAYOUTS, find_pachi, pachi_command
from jaxgo.go.coords import point_to_gtp
from jaxgo.go.gtp_client import GtpFailure, GtpProcess, find_gnugo
from jaxgo.go.sgf import replay
from jaxgo.match import CpuShares, read_game_records


def sgf_records(paths: list[str]) -> list[tuple[str, object]]:
    """``jaxgo.match.read_game_records``' records, with the count of unreadable ones on stderr."""
    records, broken = read_game_records(paths)
    if broken:
        print(f"skipped {broken} unreadable SGF records", file=sys.stderr)
    return records


def positions(records, move_numbers: list[int]) -> list[dict]:
    """[{"id", "size", "komi", "moves": [[colour letter, vertex], ...], "record", "number", "played"}]: each
    record after each number of moves (records too short for a number, with no next move, are skipped);
    ``played`` is the record's next move, upper case."""
    out = []
    for name, record in records:
        if record.setup_black or record.setup_white:
            continue  # handicap / setup positions are not replayed by ``play`` commands
        vertices = record.gtp_moves()
        for n in move_numbers:
            if n < len(vertices):
                out.append({"id": f"{name}@{n}", "size": record.size, "komi": record.komi, "moves": vertices[:n],
                            "record": record, "number": n, "played": vertices[n][1].upper()})
    return out


def to_move(position: dict) -> str:
    """The colour to move (GTP word) after the position's moves."""
    moves = position["moves"]
    return "white" if moves and moves[-1][0] == "B" else "black"


def ask_move(engine: GtpProcess, position: dict) -> str:
    """The engine's move in the position (``reg_genmove``, else ``genmove``), upper case."""
    engine.set_position(position["size"], position["komi"], position["moves"])
    try:
        move = engine.send(f"reg_genmove {to_move(position)}", timeout=600)
    except GtpFailure:
        move = ""
    return (move or engine.send(f"genmove {to_move(position)}", timeout=600)).upper()


def parse_top_moves(text: str) -> dict:
    """{vertex: value} of GNU Go's ``top_moves`` reply ("C6 23.55 K2 20.14 ...")."""
    words = text.split()
    return {words[i].upper(): float(words[i + 1]) for i in range(0, len(words) - 1, 2)}


def reference_moves(positions_: list[dict], cache: Path, level: int) -> dict:
    """{position id: {"move", "top"}} from GNU Go, asked only for the positions missing from ``cache``."""
    known = {}
    if cache.exists():
        for line in cache.read_text().splitlines():
            row = json.loads(line)
            known[row["id"]] = row
    missing = [p for p in positions_ if p["id"] not in known]
    if missing:
        binary = find_gnugo()
        if binary is None:
            raise FileNotFoundError("gnugo not found (bash scripts/setup.sh installs it)")
        with GtpProcess([binary, "--mode", "gtp", "--level", str(level), "--chinese-rules"]) as gnugo, \
                open(cache, "a") as out:
            for position in missing:
                move = ask_move(gnugo, position)
                row = {"id": position["id"], "move": move, "top": parse_top_moves(gnugo.send("top_moves"))}
                out.write(json.dumps(row) + "\n")
                out.flush()
                known[row["id"]] = row
    return known


def pachi_value(pachi: GtpProcess, position: dict, move: str) -> float | None:
    """The win rate of the side to move of ``position`` after ``move`` (GTP vertex, PASS), by Pachi's search of the
    reply: one minus the win rate ``pachi-result`` reports for it; a resignation is worth 0.  None where Pachi
    answers the reply without a search (``pachi-result`` refused: a pass after the game's second pass, say)."""
    if move.upper() == "RESIGN":
        return 0.0
    colour = to_move(position)
    pachi.set_position(position["size"], position["komi"], position["moves"] + [[colour[0].upper(), move]])
    pachi.send(f"genmove {'white' if colour == 'black' else 'black'}", timeout=600)
    try:
        return 1.0 - float(pachi.send("pachi-result").split()[3])
    except GtpFailure:
        return None


def judged(position: dict, moves: list[str], reference: dict) -> bool:
    """Whether the judge has a value for its own choice and every one of ``moves`` in ``position``."""
    entry = reference[position["id"]]
    values = entry.get("values")
    if values is None:  # GNU Go's judge: every move has a score
        return True
    return all(values.get(move) is not None for move in [entry["move"], *moves])


def pachi_reference(positions_: list[dict], engine_moves: list[list[str]], cache: Path, playouts: int,
                    threads: int) -> dict:
    """{position id: {"move": Pachi's choice, "values": {move: the mover's win rate after it}}} for Pachi's own
    choice and every move of ``engine_moves`` (per engine, per position), searching only the (position, move)
    pairs missing from ``cache`` (JSONL rows {"id", "move"?, "values"}, appended)."""
    known: dict = {}
    if cache.exists():
        for line in cache.read_text().splitlines():
            row = json.loads(line)
            entry = known.setdefault(row["id"], {"move": None, "values": {}})
            entry["move"] = row.get("move") or entry["move"]
            entry["values"].update(row["values"])
    pending = []
    for i, position in enumerate(positions_):
        entry = known.get(position["id"], {"move": None, "values": {}})
        moves = [m[i] for m in engine_moves]
        if entry["move"] is None or any(move not in entry["values"] for move in [entry["move"], *moves]):
            pending.append((position, moves))
    if not pending:
        return known
    binary = find_pachi()
    if binary is None:
        raise FileNotFoundError("pachi not found: build it with `bash scripts/pachi.sh` (../shared/peers/pachi)")
    judge = pachi_command(binary, playouts, threads, seed=1, options="resign_threshold=0")  # never resigns
    with GtpProcess(judge) as pachi, open(cache, "a") as out:
        for done, (position, moves) in enumerate(pending):
            entry = known.setdefault(position["id"], {"move": None, "values": {}})
            row = {"id": position["id"], "values": {}}
            if entry["move"] is None:
                pachi.set_position(position["size"], position["komi"], position["moves"])
                entry["move"] = row["move"] = pachi.send(f"genmove {to_move(position)}", timeout=600).upper()
            for move in [entry["move"], *moves]:
                if move not in entry["values"]:
                    value = pachi_value(pachi, position, move)
                    entry["values"][move] = row["values"][move] = None if value is None else round(value, 4)
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(f"pachi judge: {done + 1}/{len(pending)}", file=sys.stderr, flush=True)
    return known


def loss(move: str, entry: dict) -> float:
    """Pachi's choice's value minus ``move``'s (``pachi_reference``'s entry of the position)."""
    return entry["values"][entry["move"]] - entry["values"][move]


def policy_moves(positions_: list[dict]) -> list[str]:
    """The move model's likeliest non-pass move in every position, no search: the model of the default engine's
    priors (``SearchConfig.prior_model``: on 13x13 and 19x19 the large-pattern model)."""
    import numpy as np

    from jaxgo.search import priors
    from jaxgo.search.config import SearchConfig

    moves = []
    for position in positions_:
        game = replay(position["record"], move_number=position["number"] + 1)
        legal = np.asarray(game.legal_moves(game.to_play), bool)
        prior = priors.gamma_prior(game, legal, prior_model=SearchConfig().prior_model)
        prior[-1] = -1.0  # pass last
        moves.append(point_to_gtp(int(np.argmax(prior)), position["size"]).upper())
    return moves


def score(move: str, top: dict) -> float:
    """GNU Go's value of ``move`` over its best move's value (0 outside its list or without a positive best)."""
    best = max(top.values(), default=0.0)
    return top.get(move, 0.0) / best if best > 0 else 0.0


def mean_interval(values: list[float]) -> tuple[float, float, float]:
    """(mean, low, high): the mean with a 95% normal-approximation interval."""
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    half = 1.96 * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def summary(name: str, moves: list[str], positions_: list[dict], reference: dict, first=None,
            judge: str = "gnugo") -> dict:
    """The JSON line of one engine (``first``: (name, scores) of the engine the paired difference is taken to):
    GNU Go's ratios (``score``) or, with ``judge`` pachi, the losses (``loss``)."""
    entries = [reference[p["id"]] for p in positions_]
    row = {"engine": name, "positions": len(moves),
           "top1": sum(m == e["move"] for m, e in zip(moves, entries))}
    if judge == "pachi":
        ratios = [loss(m, e) for m, e in zip(moves, entries)]
        key = "mean_loss"
    else:
        ratios = [score(m, e["top"]) for m, e in zip(moves, entries)]
        row["top10"] = sum(m in e["top"] for m, e in zip(moves, entries))
        key = "mean_ratio"
    mean, low, high = mean_interval(ratios)
    row.update({"record": sum(m == p["played"] for m, p in zip(moves, positions_)),
                key: round(mean, 3), "ci95": [round(low, 3), round(high, 3)]})
    if first is not None:
        diff, dlow, dhigh = mean_interval([a - b for a, b in zip(ratios, first[1])])
        row.update(diff_vs=first[0], diff=round(diff, 3), diff_ci95=[round(dlow, 3), round(dhigh, 3)])
    return row, ratios


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="jaxgo eval move-quality", description=__doc__.split("\n")[0])
    parser.add_argument("--sgf", nargs="+", required=True, help="SGF files, folders of them, or tars")
    parser.add_argument("--records", type=int, default=None,
                        help="only the first N game records (in name order; default all)")
    parser.add_argument("--moves", type=int, nargs="+", default=[10, 30, 50, 70],
                        help="positions after these numbers of moves (default %(default)s)")
    parser.add_argument("--engine", action="append", default=[], metavar="NAME=COMMAND")
    parser.add_argument("--policy", action="store_true", help="also score the move model alone (no search)")
    parser.add_argument("--level", type=int, default=10, help="GNU Go level of the reference (default 10)")
    parser.add_argument("--judge", choices=("gnugo", "pachi"), default="gnugo",
                        help="who rates the moves: GNU Go's move values (default) or Pachi's win rates")
    parser.add_argument("--judge-playouts", type=int, default=20000,
                        help="Pachi's playouts per search as the judge (default %(default)s)")
    parser.add_argument("--judge-threads", type=int, default=2, help="Pachi's threads as the judge")
    parser.add_argument("--reference", default=None,
                        help="JSONL cache of the judge's answers (default: beside --out, else none kept)")
    parser.add_argument("--out", default=None, help="JSONL of the per-position rows")
    parser.add_argument("--parallel", type=int, default=1)
    args = parser.parse_args(argv)

    engines = []
    for item in args.engine:
        name, sep, command = item.partition("=")
        if not sep or not name.strip() or not command.strip():
            parser.error(f"--engine {item!r}: expected NAME=COMMAND")
        engines.append((name.strip(), command.strip()))
    if not engines and not args.policy:
        parser.error("nothing to score: give --engine NAME=COMMAND and/or --policy")
    todo = positions(sgf_records(args.sgf)[:args.records], args.moves)
    if not todo:
        parser.error("no positions: the records are shorter than every --moves number")
    if args.judge == "pachi" and args.judge_playouts < PACHI_MIN_PLAYOUTS:
        parser.error(f"--judge-playouts: Pachi plays at least {PACHI_MIN_PLAYOUTS} playouts per move")
    scratch = tempfile.TemporaryDirectory()
    suffix = "gnugo" if args.judge == "gnugo" else f"pachi{args.judge_playouts}"
    cache = Path(args.reference or (f"{args.out}.{suffix}.jsonl" if args.out else Path(scratch.name) / "judge.jsonl"))
    if args.judge == "gnugo":
        reference = reference_moves(todo, cache, args.level)
        print(f"{len(todo)} positions; GNU Go level {args.level} reference ready", file=sys.stderr, flush=True)

    shares = CpuShares(args.parallel)

    def run_engine(entry):
        name, command = entry
        with shares.take() as cpus, GtpProcess(command, cpus=cpus) as engine:
            moves = []
            for i, position in enumerate(todo):
                moves.append(ask_move(engine, position))
                print(f"{name}: {i + 1}/{len(todo)}", file=sys.stderr, flush=True)
            return name, moves

    with ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
        results = list(pool.map(run_engine, engines))
    if args.policy:
        results.append(("policy", policy_moves(todo)))
    if args.judge == "pachi":
        reference = pachi_reference(todo, [moves for _, moves in results], cache, args.judge_playouts,
                                    args.judge_threads)
    scratch.cleanup()
    keep = [i for i, position in enumerate(todo) if judged(position, [moves[i] for _, moves in results], reference)]
    first = None
    for name, moves in results:
        row, ratios = summary(name, [moves[i] for i in keep], [todo[i] for i in keep], reference, first, args.judge)
        if len(keep) < len(todo):
            row["unjudged"] = len(todo) - len(keep)  # positions left out: a move the judge could not value
        first = first or (name, ratios)
        print(json.dumps(row), flush=True)
    if args.out:
        with open(args.out, "w") as out:
            for i, position in enumerate(todo):
                entry = reference[position["id"]]
                values = {"values": entry["values"]} if args.judge == "pachi" else {}
                out.write(json.dumps({"id": position["id"], args.judge: entry["move"], "record": position["played"],
                                      **{name: moves[i] for name, moves in results}, **values}) + "\n")
    return 0

