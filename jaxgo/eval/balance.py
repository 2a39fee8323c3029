"""Balance the heavy playouts on game results: SPSA on per-group gamma factors, scored by the playouts' Brier score.

    jaxgo eval balance --sgf benchmarks/games/sgf_9x9_default.tar.xz benchmarks/games/sgf_9x9_time.tar.xz \\
        --iterations 40 --positions 1200 --playouts 32 --log /tmp/balance.jsonl --save /tmp/balanced_gammas.npz

Simulation balancing (Huang, Coulom & Lin 2010) changes a playout policy so that its mean outcome is right rather
than its moves likely.  This is its derivative-free form on a few parameters: theta holds one log-factor per
small feature group of the shipped gammas (capture, extension, self_atari, atari, dist_prev, dist_prev2, line:
every present level of the group multiplied by exp(theta_g)) and one log-exponent on the 3x3 pattern gammas
(pattern log-gammas times exp(theta_pattern)).  The objective is ``jaxgo.eval.playout_quality``'s Brier score of
the playouts' Black win rate against the game's winner, on the positions of a training half of the games
(split by a hash of the record name; the other half is held out).  Iteration k evaluates theta + c_k delta and
theta - c_k delta (delta random signs) on ``--positions`` training positions with the same random key (common
random numbers, so the difference is mostly the policies') and steps down the measured slope (Spall's gains,
as ``jaxgo/eval/spsa.py``).  One JSON line per iteration goes to ``--log``; the same command continues a
killed run from its last line.  At the end the final theta and the shipped gammas (theta = 0) are scored on
every held-out position (paired Brier difference, game-bootstrap interval), and ``--save`` writes the balanced
gammas (``jaxgo gtp --gammas FILE`` plays with them).

With ``--judge-values CACHE`` (a judge's cache of ``jaxgo eval move-quality``, its ids naming records of ``--sgf``)
the objective is instead the within-position correlation (or ``--judge-objective slope``) of the playouts' win rates
with the judge's values of the moves of each position (``jaxgo.eval.judged_moves``), maximised: playouts that tell
apart the moves the judge rates apart.  The split into training and held-out positions is the same hash of the
record name, and the final lines are judged_moves' summaries (slope, concordance, paired slope difference) on the
held-out positions.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

from jaxgo.eval import judged_moves
from jaxgo.eval import playout_quality as quality
from jaxgo.eval.spsa import gains
from jaxgo.features import gammas as gamma_files
from jaxgo.playouts.evaluator import Evaluator, load_log_gammas
from jaxgo.playouts.xla import heavy

GROUPS = ("capture", "extension", "self_atari", "atari", "dist_prev", "dist_prev2", "line", "pattern")


def balanced_log_gamma(base: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """float64 [K]: the log-gammas ``base`` with theta [len(GROUPS)] applied (see the module docstring)."""
    log_gamma = np.asarray(base, np.float64).copy()
    for group, value in zip(GROUPS, theta):
        levels = quality.present_levels(group)
        if group == "pattern":
            log_gamma[levels] *= np.exp(value)
        else:
            log_gamma[levels] += value
    return log_gamma


def held_out(name: str) -> bool:
    """Whether a record is in the held-out half: a stable hash of its file name (not of the folder or archive it
    was read from, ``folder:member`` or ``.../file.sgf``, so the split does not depend on where the games lie; not
    the names' order)."""
    base = name.rsplit(":", 1)[-1].rsplit("/", 1)[-1]
    return hashlib.sha256(base.encode()).digest()[0] % 2 == 1


def brier(base: np.ndarray, theta: np.ndarray, items: list[dict], playouts: int, seed: int, batch: int) -> tuple:
    """(Brier score, win rates [n]) of the playouts under theta on ``items``."""
    evaluator = Evaluator("heavy", heavy.policy_tables(balanced_log_gamma(base, theta)))
    p = quality.black_win_rates(evaluator, items, playouts, seed, batch)
    y = np.array([item["winner"] for item in items], np.float64)
    return float(np.mean((p - y) ** 2)), p


def judged_objective(measure):
    """The objective of ``--judge-values``: (theta, ...) -> (minus ``measure`` (``judged_moves.correlation`` or
    ``slope``) of the movers' win rates on the judge's values, win rates [n]) on judged ``items``
    (``judged_moves.judged_items``); minus, so that SPSA minimises every objective."""
    def objective(base: np.ndarray, theta: np.ndarray, items: list[dict], playouts: int, seed: int,
                  batch: int) -> tuple:
        evaluator = Evaluator("heavy", heavy.policy_tables(balanced_log_gamma(base, theta)))
        p = judged_moves.mover_win_rates(evaluator, items, playouts, seed, batch)
        v = np.array([item["value"] for item in items])
        return -measure(p, v, np.array([item["position"] for item in items])), p
    return objective


def read_log(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="jaxgo eval balance", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sgf", nargs="+", required=True, help="SGF files, folders or tars of folders")
    parser.add_argument("--moves", type=int, nargs="+", default=[10, 20, 30, 40])
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--positions", type=int, default=1200, help="training positions per evaluation")
    parser.add_argument("--playouts", type=int, default=32, help="playouts per position while tuning")
    parser.add_argument("--final-playouts", type=int, default=64, help="playouts per held-out position at the end")
    parser.add_argument("--a", type=float, default=2.0, help="SPSA step size a (theta units per Brier unit)")
    parser.add_argument("--c", type=float, default=0.3, help="SPSA perturbation c (theta units)")
    parser.add_argument("--big-a", type=float, default=4.0, help="SPSA stability constant A")
    parser.add_argument("--bound", type=float, default=2.0, help="|theta_g| is kept at most this")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log", required=True, help="JSONL log, one line per iteration (continued when it exists)")
    parser.add_argument("--save", help="write the balanced gammas here (npz, as jaxgo gammas train writes)")
    parser.add_argument("--judge-values", help="tune on a judge's move values (jaxgo eval move-quality's cache) "
                                               "instead of the games' results")
    parser.add_argument("--judge-objective", choices=("correlation", "slope"), default="correlation",
                        help="what to maximise on the judged moves (judged_moves: the slope also grows when the "
                             "playouts only get sharper)")
    args = parser.parse_args(argv)

    if args.judge_values:
        items = judged_moves.judged_items(judged_moves.judge_values(args.judge_values), args.sgf)
        measure = getattr(judged_moves, args.judge_objective)
        score, method = judged_objective(measure), f"spsa-judge-{args.judge_objective}"
    else:
        items = quality.positions(quality.sgf_records(args.sgf), args.moves)
        score, method = brier, "spsa-brier"
    train = [item for item in items if not held_out(item.get("split", item["game"]))]
    test = [item for item in items if held_out(item.get("split", item["game"]))]
    if args.judge_values:
        sample = train  # a position's moves are scored together: all of them
    else:
        rng = np.random.default_rng(args.seed)
        sample = [train[i] for i in sorted(rng.choice(len(train), min(args.positions, len(train)), replace=False))]
    unit = "judged moves" if args.judge_values else "positions"
    print(f"{len(train)} training {unit} ({len(sample)} per evaluation), {len(test)} held out", file=sys.stderr)
    base = load_log_gammas(None)
    log = Path(args.log)
    done = read_log(log)
    theta = np.array(done[-1]["theta_after"]) if done else np.zeros(len(GROUPS))
    for k in range(len(done), args.iterations):
        started = time.perf_counter()
        a_k, c_k = gains(k, args.a, args.c, args.big_a)
        delta = np.random.default_rng([args.seed, k]).choice([-1.0, 1.0], len(GROUPS))
        key_seed = args.seed * 100003 + k  # the same playout keys for both sides of the iteration
        plus, _ = score(base, theta + c_k * delta, sample, args.playouts, key_seed, args.batch)
        minus, _ = score(base, theta - c_k * delta, sample, args.playouts, key_seed, args.batch)
        after = np.clip(theta - a_k * (plus - minus) / (2.0 * c_k * delta), -args.bound, args.bound)
        row = {"iteration": k, "theta": theta.tolist(), "delta": delta.tolist(), "objective_plus": plus,
               "objective_minus": minus, "theta_after": after.tolist(),
               "seconds": round(time.perf_counter() - started, 1)}
        with log.open("a") as out:
            out.write(json.dumps(row) + "\n")
        print(json.dumps(row), file=sys.stderr, flush=True)
        theta = after
    _, shipped = score(base, np.zeros(len(GROUPS)), test, args.final_playouts, args.seed + 1, args.batch)
    _, balanced = score(base, theta, test, args.final_playouts, args.seed + 1, args.batch)
    tuned = {"theta": dict(zip(GROUPS, np.round(theta, 4).tolist()))}
    if args.judge_values:
        print(json.dumps(judged_moves.summary("shipped", shipped, test) | {"theta": [0.0] * len(GROUPS)}))
        print(json.dumps(judged_moves.summary("balanced", balanced, test, shipped) | tuned))
    else:
        y = np.array([item["winner"] for item in test], np.float64)
        games = np.array([item["game"] for item in test])
        print(json.dumps(quality.report("shipped", shipped, y, games, None, {"theta": [0.0] * len(GROUPS)})))
        print(json.dumps(quality.report("balanced", balanced, y, games, shipped, tuned)))
    if args.save:
        meta = {"balanced_from": "shipped", "theta": dict(zip(GROUPS, theta.tolist())), "method": method}
        gamma_files.Gammas(log_gamma=balanced_log_gamma(base, theta).astype(np.float32), meta=meta).save(args.save)
    return 0

