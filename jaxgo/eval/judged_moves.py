"""How far a playout policy tells apart the moves a judge rates apart: playouts after each judged move.

    jaxgo eval judged-moves --judge-values benchmarks/logs/move_quality_9x9_pachi_judge_1207.pachi10000.jsonl \\
        --sgf /tmp/g/sgf_9x9_pachi_2k_1202_defaults --variant heavy=heavy --variant rules=rules --playouts 1024

A tree search picks between moves by the mean outcome of the playouts below them; the gap between a good move's
mean and a bad one's, against the noise of a playout (about 1/2), is what it has to go on.  ``jaxgo eval
move-quality --judge pachi`` leaves a cache of Pachi's win rates after several moves of each position (one JSON
line per position: ``{"id": "SGF:RECORD@N", "values": {"D3": 0.53, "D2": 0.35}}``).  Here every judged move is
played on its position (replayed from the SGF named in the id) and ``--playouts`` playouts of each ``--variant``
(``jaxgo eval playout-quality``'s ``NAME=POLICY[:T[:GROUP*F,...]]``) run from the result; the mover's win rate p
is set against the judge's value v of the same move.  Within each position (both centred on the position's mean):

    slope = sum(p' v') / sum(v' v')        how much of the judge's difference between two moves the playouts see
    correlation                            the same, scale-free: sum(p' v') / sqrt(sum(p' p') sum(v' v'))
    concordance                            of the pairs of moves the judge rates >= 0.05 apart, the share the
                                           playouts order the same way

A slope of 1 would be playouts as sharp as the judge; 0, playouts blind to the choice.  Every variant uses the same
random keys (common random numbers), and the paired difference of each slope to the first variant's comes with a
bootstrap interval over positions.  ``jaxgo eval balance --judge-values`` tunes the heavy playouts' gammas on the
correlation (simulation balancing on a judge's move values rather than on game results).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

from jaxgo.eval import playout_quality as quality
from jaxgo.go.coords import gtp_to_point
from jaxgo.go.game import IllegalMove
from jaxgo.go.sgf import replay
from jaxgo.match import read_game_records
from jaxgo.search.priors import game_last_moves

CLOSE = 0.05  # judged values closer than this are not counted as a pair for the concordance


def judge_values(path: str | Path) -> dict:
    """{position id: {vertex: value}} from a judge's JSONL cache (later lines add to earlier ones; pass and resign
    left out)."""
    values: dict = {}
    for line in Path(path).read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        moves = {move.upper(): float(v) for move, v in row["values"].items() if move.upper() not in ("PASS", "RESIGN")}
        values.setdefault(row["id"], {}).update(moves)
    return values


def split_id(position_id: str) -> tuple[str, int]:
    """(record name as ``read_game_records`` names it, number of moves played) of ``SGF:RECORD@N``."""
    name, _, number = position_id.rpartition("@")
    return name, int(number)


def judged_items(values: dict, sgf: list[str]) -> list[dict]:
    """[{"position", "game", "split", "move", "value", "mover", "state", "komi", "last"}]: one per judged move of a
    position with two or more, the position after that move (the records read from ``sgf``; positions of records
    not found and moves not legal there are skipped, their counts on stderr).  ``split``: the record's path
    inside its folder or archive with "/" as "-", a name for ``balance.held_out`` (series folders hold many
    records named game_0000.sgf)."""
    records = dict(read_game_records(sgf)[0])
    items, missing, illegal = [], 0, 0
    for position_id, moves in values.items():
        name, number = split_id(position_id)
        record = records.get(name)
        if record is None or len(moves) < 2:
            missing += record is None
            continue
        position = replay(record, move_number=number + 1)
        mover = position.to_play
        split = name.rsplit(":", 1)[-1].replace("/", "-")
        for move, value in sorted(moves.items()):
            game = position.copy()
            try:
                game.play(mover, gtp_to_point(move, record.size))
            except (IllegalMove, ValueError):
                illegal += 1
                continue
            items.append({"position": position_id, "game": name, "split": split, "move": move, "value": value,
                          "mover": mover, "state": game.state, "komi": record.komi, "last": game_last_moves(game)})
    if missing or illegal:
        print(f"{missing} judged positions not in the SGF records given, {illegal} judged moves not legal there",
              file=sys.stderr)
    return items


def mover_win_rates(evaluator, items: list[dict], playouts: int, seed: int, batch: int = 256) -> np.ndarray:
    """float [n]: the fraction of ``playouts`` playouts the mover of each item wins (draws half)."""
    black = quality.black_win_rates(evaluator, items, playouts, seed, batch)
    mover = np.array([item["mover"] for item in items])
    return np.where(mover == 1, black, 1.0 - black)


def centred(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """values [n] minus the mean of their group (groups [n], any labels)."""
    _, index = np.unique(groups, return_inverse=True)
    means = np.bincount(index, values) / np.bincount(index)
    return values - means[index]


def slope(p: np.ndarray, v: np.ndarray, groups: np.ndarray) -> float:
    """The within-group regression slope of p on v (both float [n]): sum(p' v') / sum(v'^2), primes centred."""
    pc, vc = centred(p, groups), centred(v, groups)
    return float(np.sum(pc * vc) / np.sum(vc * vc))


def correlation(p: np.ndarray, v: np.ndarray, groups: np.ndarray) -> float:
    """The within-group correlation of p and v: sum(p' v') / sqrt(sum(p'^2) sum(v'^2)), primes centred.  Unlike
    the slope it does not grow when a policy only spreads its win rates (sharper playouts spread right and wrong
    differences alike)."""
    pc, vc = centred(p, groups), centred(v, groups)
    return float(np.sum(pc * vc) / np.sqrt(np.sum(pc * pc) * np.sum(vc * vc)))


def concordance(p: np.ndarray, v: np.ndarray, groups: np.ndarray, close: float = CLOSE) -> tuple[float, int]:
    """(share of same-group pairs with |v_a - v_b| >= close that p orders as v does, number of such pairs)."""
    agree = total = 0
    for group in np.unique(groups):
        members = np.flatnonzero(groups == group)
        for a, b in itertools.combinations(members, 2):
            if abs(v[a] - v[b]) >= close:
                total += 1
                agree += (p[a] - p[b]) * (v[a] - v[b]) > 0
    return (agree / total if total else float("nan")), total


def bootstrap_slope_difference(p: np.ndarray, base: np.ndarray, v: np.ndarray, groups: np.ndarray,
                               resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """95% interval of slope(p) - slope(base), resampling whole groups."""
    labels, index = np.unique(groups, return_inverse=True)
    members = [np.flatnonzero(index == g) for g in range(len(labels))]
    pc, bc, vc = centred(p, groups), centred(base, groups), centred(v, groups)
    rng = np.random.default_rng(seed)
    diffs = []
    for _ in range(resamples):
        rows = np.concatenate([members[g] for g in rng.integers(0, len(labels), len(labels))])
        vv = np.sum(vc[rows] ** 2)
        diffs.append((np.sum(pc[rows] * vc[rows]) - np.sum(bc[rows] * vc[rows])) / vv)
    low, high = np.percentile(diffs, [2.5, 97.5])
    return float(low), float(high)


def summary(name: str, p: np.ndarray, items: list[dict], base: np.ndarray | None = None) -> dict:
    """The JSON line of a variant: slope, concordance, pairs, mean win rate; with ``base`` the paired slope
    difference and its interval."""
    v = np.array([item["value"] for item in items])
    groups = np.array([item["position"] for item in items])
    agree, pairs = concordance(p, v, groups)
    row = {"variant": name, "positions": len(np.unique(groups)), "moves": len(items),
           "slope": round(slope(p, v, groups), 4), "correlation": round(correlation(p, v, groups), 4),
           "concordance": round(agree, 3), "pairs": pairs,
           "mean_win_rate": round(float(np.mean(p)), 3)}
    if base is not None:
        low, high = bootstrap_slope_difference(p, base, v, groups)
        row.update(slope_diff=round(slope(p, v, groups) - slope(base, v, groups), 4),
                   slope_diff_ci95=[round(low, 4), round(high, 4)])
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="jaxgo eval judged-moves", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judge-values", required=True, help="a judge's JSONL cache (jaxgo eval move-quality)")
    parser.add_argument("--sgf", nargs="+", required=True, help="the SGF files, folders or tars the ids name")
    parser.add_argument("--variant", action="append", type=quality.parse_variant, required=True,
                        help="NAME=POLICY[:T[:GROUP*F,...]] (repeatable; the first is the baseline)")
    parser.add_argument("--playouts", type=int, default=1024, help="playouts after each judged move")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    items = judged_items(judge_values(args.judge_values), args.sgf)
    if not items:
        parser.error("no judged position with two or more moves found in the SGF records")
    base = None
    for name, policy, temperature, factors in args.variant:
        p = mover_win_rates(quality.variant_evaluator(policy, temperature, factors), items, args.playouts,
                            args.seed, args.batch)
        print(json.dumps(summary(name, p, items, base)), flush=True)
        base = p if base is None else base
    return 0


if __name__ == "__main__":
    sys.exit(main())
