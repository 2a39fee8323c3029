"""``jaxgo bench search``: playouts per second inside a full search vs raw batched playouts at the same batch
shape (JSON lines).

    jaxgo bench search --size 9 --playouts 8192 --strategies rave uct

Raw: ``playout.run`` on K positions x L playouts (the search's batch shape), timed after a compile call.
Search: the strategy's ``Searcher.search`` from the empty board and from a position 20 random moves in,
timed after a warm-up search (compiles excluded).  ratio = search / raw.

With ``--defaults`` the search runs the engine's default configuration (heavy playouts, progressive bias) at the
given K and L instead of light playouts without priors (no bias, no virtual experience, no late policy), and no
raw figure or ratio is printed: the rate a game on a clock gets (``mcts.FIRST_SEARCH_RATES``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

import jax
import numpy as np

from jaxgo.playouts import light as playout
from jaxgo.go.game import new_game
from jaxgo.search.config import SearchConfig
from jaxgo.search.mcts import Searcher, stack_state


def main(argv=None):
    parser = argparse.ArgumentParser(prog="jaxgo bench search", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--playouts", type=int, default=8192)
    parser.add_argument("--leaves", type=int, default=128)
    parser.add_argument("--playouts-per-leaf", type=int, default=4)
    parser.add_argument("--strategies", nargs="+", default=["rave", "uct"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--defaults", action="store_true",
                        help="search with the engine's default playouts and priors (no raw comparison)")
    args = parser.parse_args(argv)
    k, lpl = args.leaves, args.playouts_per_leaf
    game = new_game(size=args.size, komi=7.5)
    device = jax.devices()[0].platform
    raw = None
    if not args.defaults:
        raw = raw_rate(game, k, lpl, args.repeats)
        print(json.dumps({"bench": "raw_playouts", "device": device, "size": args.size, "batch": k * lpl,
                          "playouts_per_s": round(raw, 1)}), flush=True)
    rng = np.random.default_rng(0)
    mid = new_game(size=args.size, komi=7.5)
    for _ in range(20):
        legal = np.flatnonzero(mid.legal_moves(mid.to_play)[:-1])
        mid.play(mid.to_play, int(rng.choice(legal)))
    for strategy in args.strategies:
        for label, position in (("empty", game), ("move20", mid)):
            config = SearchConfig(strategy=strategy, leaves_per_batch=k, playouts_per_leaf=lpl)
            if not args.defaults:
                config = dataclasses.replace(config, playouts="light", bias_c2=0.0, prior_pattern=0.0,
                                             late_playouts=None)
            searcher = Searcher(position.rules, config, seed=1)
            searcher.search(position, playouts=k * lpl)  # warm-up / compile
            done, seconds = 0, 0.0
            for _ in range(args.repeats):
                searcher.reset()
                result = searcher.search(position, playouts=args.playouts)
                done += result.playouts
                seconds += result.seconds
            rate = done / seconds
            print(json.dumps({"bench": "search", "device": device, "strategy": strategy, "position": label,
                              "size": args.size, "batch": k * lpl, "playouts_per_move": args.playouts,
                              "config": "defaults" if args.defaults else "light",
                              "playouts_per_s": round(rate, 1),
                              "raw_playouts_per_s": None if raw is None else round(raw, 1),
                              "ratio": None if raw is None else round(rate / raw, 3),
                              "tree_nodes": int(searcher.tree.size) if searcher.tree is not None else None}),
                  flush=True)
    return 0


def raw_rate(game, k: int, lpl: int, repeats: int) -> float:
    """Light playouts/s of ``playout.run`` on K copies of the position x L playouts, after a compile call."""
    states = stack_state(game.state, k)
    playout.run(states, jax.random.PRNGKey(0), 7.5, num_per_state=lpl).winner.block_until_ready()
    start = time.perf_counter()
    for i in range(repeats * 4):
        playout.run(states, jax.random.PRNGKey(i + 1), 7.5, num_per_state=lpl).winner.block_until_ready()
    return repeats * 4 * k * lpl / (time.perf_counter() - start)


if __name__ == "__main__":
    main()
