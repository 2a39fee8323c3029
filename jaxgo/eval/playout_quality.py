"""How well a playout policy predicts who wins: the playouts' mean outcome against the games' results.

    jaxgo eval playout-quality --sgf benchmarks/games/sgf_9x9_default.tar.xz --moves 10 20 30 40 \\
        --variant heavy=heavy --variant light=light --variant T0.7=heavy:0.7 --playouts 64 --out /tmp/pq.jsonl

A search is as good as its leaf evaluations, and simulation balancing (Huang, Coulom & Lin 2010) asks of a
playout policy that its mean outcome be right, not that its moves be likely.  This measures exactly that, in
seconds instead of a match series: every game record of ``--sgf`` (SGF files, folders, or tars of folders; games
with a forfeit, a void or no result and setup positions are skipped) is set up after each of ``--moves`` moves,
every ``--variant NAME=POLICY[:T[:GROUP*F,...]]`` (light, heavy or rules; T the heavy playouts' temperature,
gamma ** (1 / T); ``capture*100,extension*100`` multiplies the gammas of those feature groups' present levels)
plays ``--playouts`` playouts from it (the game's komi, its last two moves for the distance features), and the
fraction p that Black wins (draws half) is scored against the game's winner y (1 Black, 0 White):

    brier = mean (p - y) ** 2 (lower is better; always answering 1/2 scores 0.25), log_loss (p clipped to
    [0.01, 0.99]), accuracy = how often p > 1/2 names the winner.

The label is the result of the game actually played from there (jaxgo against GNU Go for the shipped archives),
a noisy but unbiased target for "who wins from here"; the noise is the same for every variant, so differences
between variants measure the policies.  Intervals: 95%, bootstrap over games (the positions of one game are not
independent), 1,000 resamples; every variant after the first also gets the paired difference to the first.
Prints one JSON line per variant (and per move number with ``--by-move``); ``--out`` keeps the per-position rows.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import jax
import numpy as np

from jaxgo.eval.move_quality import sgf_records
from jaxgo.features import moves as move_features
from jaxgo.go.sgf import replay
from jaxgo.playouts.evaluator import Evaluator, load_log_gammas, make_evaluator
from jaxgo.playouts.xla import heavy
from jaxgo.search.priors import game_last_moves


def winner_of(result: str | None) -> int | None:
    """1 (Black won), 0 (White won) or None (no result, a draw, void, or a forfeit, which says nothing about
    the position) from an SGF RE value."""
    if not result or result[:2] not in ("B+", "W+") or result[2:3] in ("F", "f"):
        return None
    return 1 if result[0] == "B" else 0


def positions(records, move_numbers: list[int]) -> list[dict]:
    """[{"game", "number", "state", "komi", "last", "winner"}]: every usable record after each move number
    (records too short for a number are skipped for it)."""
    out = []
    for name, record in records:
        winner = winner_of(record.result)
        if winner is None or record.setup_black or record.setup_white:
            continue
        for n in move_numbers:
            if n >= len(record.moves):
                continue
            game = replay(record, move_number=n + 1)
            out.append({"game": name, "number": n, "state": game.state, "komi": record.komi,
                        "last": game_last_moves(game), "winner": winner})
    return out


def parse_variant(text: str) -> tuple[str, str, float, dict]:
    """(name, policy, temperature, {feature group: factor}) of ``NAME=POLICY[:T[:GROUP*F,...]]``."""
    name, sep, spec = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"--variant {text!r}: expected NAME=POLICY[:T[:GROUP*F,...]]")
    policy, _, rest = spec.partition(":")
    temperature, _, scaled = rest.partition(":")
    try:
        factors = {group: float(factor) for group, factor in (item.split("*") for item in scaled.split(",") if item)}
        temperature = float(temperature) if temperature else 1.0
    except ValueError:
        raise argparse.ArgumentTypeError(f"--variant {text!r}: T and each GROUP*F factor must be numbers") from None
    unknown = set(factors) - set(move_features.GROUPS)
    if unknown or (factors and policy != "heavy"):
        raise argparse.ArgumentTypeError(f"--variant {text!r}: factors apply to heavy playouts' groups "
                                         f"{move_features.GROUPS}")
    return name, policy, temperature, factors


def present_levels(group: str) -> slice:
    """The indices of a feature group's present levels (all but its absent level 0) in the log-gammas."""
    offset = int(move_features.group_offsets()[move_features.GROUPS.index(group)])
    return slice(offset + 1, offset + int(move_features.group_sizes()[move_features.GROUPS.index(group)]))


def variant_evaluator(policy: str, temperature: float, factors: dict) -> Evaluator:
    """The evaluator of a variant: ``make_evaluator``'s, or for heavy playouts with group factors the shipped
    gammas with every present level of each named group multiplied by its factor (then the temperature)."""
    if not factors:
        return make_evaluator(policy, None, 1, temperature)
    log_gamma = load_log_gammas(None).astype(np.float64)
    for group, factor in factors.items():
        log_gamma[present_levels(group)] += np.log(factor)
    return Evaluator("heavy", heavy.policy_tables(log_gamma / temperature))


def black_win_rates(evaluator, items: list[dict], playouts: int, seed: int, batch: int) -> np.ndarray:
    """float [len(items)]: the fraction of ``playouts`` playouts Black wins (draws half) from every position."""
    rates = []
    key = jax.random.PRNGKey(seed)
    for start in range(0, len(items), batch):
        chunk = items[start:start + batch]
        count = len(chunk)
        padded = chunk + [chunk[0]] * (batch - count)  # one batch shape for every call
        states = jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]),
                                        *[item["state"] for item in padded])
        last = np.array([item["last"] for item in padded], np.int32)
        komi = np.array([item["komi"] for item in chunk], np.float32)
        key, sub = jax.random.split(key)
        result = evaluator.evaluate(states, sub, playouts, komi, last, active=count)
        rates.append((result.winner == 1).mean(axis=1) + 0.5 * (result.winner == 0).mean(axis=1))
    return np.concatenate(rates)


def scores(p: np.ndarray, y: np.ndarray) -> dict:
    """brier, log_loss, accuracy of predictions p against labels y (float arrays of one length)."""
    clipped = np.clip(p, 0.01, 0.99)
    return {"brier": float(np.mean((p - y) ** 2)),
            "log_loss": float(-np.mean(y * np.log(clipped) + (1 - y) * np.log(1 - clipped))),
            "accuracy": float(np.mean(np.where(p == 0.5, 0.5, (p > 0.5) == (y == 1))))}  # a tie counts half


def bootstrap(games: np.ndarray, statistic, resamples: int = 1000, seed: int = 0):
    """(low, high) 95% interval of ``statistic(index array)`` over resamples of whole games."""
    rng = np.random.default_rng(seed)
    names, inverse = np.unique(games, return_inverse=True)
    members = [np.flatnonzero(inverse == g) for g in range(len(names))]
    values = []
    for _ in range(resamples):
        chosen = rng.integers(len(names), size=len(names))
        values.append(statistic(np.concatenate([members[g] for g in chosen])))
    return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))


def report(name: str, p: np.ndarray, y: np.ndarray, games: np.ndarray, base: np.ndarray | None, extra: dict) -> dict:
    """One JSON row: the scores with their intervals, and the Brier difference to ``base`` (paired)."""
    row = {"variant": name, **extra, "positions": int(len(p)), "games": int(len(np.unique(games))), **scores(p, y)}
    for metric in ("brier", "accuracy"):
        row[f"{metric}_ci95"] = bootstrap(games, lambda i, m=metric: scores(p[i], y[i])[m])
    if base is not None:
        diff = lambda i: float(np.mean((p[i] - y[i]) ** 2) - np.mean((base[i] - y[i]) ** 2))  # noqa: E731
        row["brier_diff"] = diff(np.arange(len(p)))
        row["brier_diff_ci95"] = bootstrap(games, diff)
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="jaxgo eval playout-quality", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sgf", nargs="+", required=True, help="SGF files, folders or tars of folders")
    parser.add_argument("--records", type=int, default=None, help="use the first N records by name")
    parser.add_argument("--moves", type=int, nargs="+", default=[10, 20, 30, 40])
    parser.add_argument("--variant", type=parse_variant, action="append", required=True,
                        help="NAME=POLICY[:T[:GROUP*F,...]], POLICY light, heavy or rules, T the heavy temperature, "
                             "GROUP*F a factor on a feature group's gammas (repeatable; the first is the base of "
                             "the paired differences)")
    parser.add_argument("--playouts", type=int, default=64, help="playouts per position (default %(default)s)")
    parser.add_argument("--batch", type=int, default=256, help="positions per device call (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--by-move", action="store_true", help="also a row per move number")
    parser.add_argument("--out", help="JSONL file for the per-position rows")
    args = parser.parse_args(argv)

    records = sgf_records(args.sgf)[: args.records]
    items = positions(records, args.moves)
    if not items:
        parser.error("no usable position (records with a result, long enough for --moves)")
    y = np.array([item["winner"] for item in items], np.float64)
    games = np.array([item["game"] for item in items])
    numbers = np.array([item["number"] for item in items])
    print(f"{len(items)} positions from {len(np.unique(games))} games", file=sys.stderr)
    predictions = {}
    for name, policy, temperature, factors in args.variant:
        started = time.perf_counter()
        evaluator = variant_evaluator(policy, temperature, factors)
        predictions[name] = black_win_rates(evaluator, items, args.playouts, args.seed, args.batch)
        print(f"{name}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    base = None
    for name, policy, temperature, factors in args.variant:
        p = predictions[name]
        settings = {"policy": policy, "temperature": temperature, "factors": factors}
        print(json.dumps(report(name, p, y, games, base, settings)),
              flush=True)
        if args.by_move:
            for n in args.moves:
                mask = numbers == n
                if mask.any():
                    print(json.dumps(report(name, p[mask], y[mask], games[mask],
                                            None if base is None else base[mask],
                                            {"policy": policy, "temperature": temperature, "factors": factors,
                                             "move": n})), flush=True)
        base = p if base is None else base
    if args.out:
        with open(args.out, "w") as out:
            for i, item in enumerate(items):
                out.write(json.dumps({"game": item["game"], "move": int(item["number"]), "winner": int(y[i]),
                                      **{name: float(predictions[name][i]) for name in predictions}}) + "\n")
    return 0

