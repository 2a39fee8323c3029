"""``jaxgo bench search``: playouts per second inside a full search vs raw batched playouts at the same batch
shape (JSON lines).

    jaxgo bench search --size 9 --playouts 8192 --strategies rave uct

Raw: the evaluator of the search's playout policy and backend (``--backend``, default auto: native on a CPU)
on K positions x L playouts (the search's batch shape), timed after a warm-up call.  Search: the strategy's
``Searcher.search`` from the empty board and from a position 20 random moves in, timed after a warm-up search
(compiles excluded).  ratio = search / raw.

With ``--defaults`` the search runs the engine's default configuration (heavy playouts, progressive bias,
virtual experience) at the given K and L, and raw is heavy playouts; otherwise light playouts without priors
(no bias, no virtual experience, no late policy).  The defaults' rate is what a game on a clock gets
(``budget.FIRST_SEARCH_RATES``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

import jax
import numpy as np

from jaxgo.go.game import new_game
from jaxgo.playouts.evaluator import make_evaluator, resolve_backend
from jaxgo.search.config import SearchConfig
from jaxgo.search.limits import SearchLimits
from jaxgo.search.searcher import Searcher
from jaxgo.search.tree import stack_state


def main(argv=None):
    parser = argparse.ArgumentParser(prog="jaxgo bench search", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--playouts", type=int, default=8192)
    parser.add_argument("--leaves", type=int, default=128)
    parser.add_argument("--playouts-per-leaf", type=int, default=4)
    parser.add_argument("--strategies", nargs="+", default=["rave", "uct"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--defaults", action="store_true",
                        help="search with the engine's default playouts and priors (raw: heavy playouts)")
    parser.add_argument("--backend", default="auto", choices=["auto", "native", "xla"],
                        help="playout backend (default auto: native on a CPU)")
    parser.add_argument("--threads", type=int, default=0, help="native: threads per batch (0: one per core)")
    args = parser.parse_args(argv)
    k, lpl = args.leaves, args.playouts_per_leaf
    game = new_game(size=args.size, komi=7.5)
    backend = resolve_backend(args.backend)
    device = jax.devices()[0].platform if backend == "xla" else "cpu"
    policy = SearchConfig().playout_policy if args.defaults else "light"
    raw = raw_rate(game, k, lpl, args.repeats, policy, backend, args.threads)
    print(json.dumps({"bench": "raw_playouts", "device": device, "backend": backend, "policy": policy,
                      "size": args.size, "batch": k * lpl, "playouts_per_s": round(raw, 1)}), flush=True)
    rng = np.random.default_rng(0)
    mid = new_game(size=args.size, komi=7.5)
    for _ in range(20):
        legal = np.flatnonzero(mid.legal_moves(mid.to_play)[:-1])
        mid.play(mid.to_play, int(rng.choice(legal)))
    for strategy in args.strategies:
        for label, position in (("empty", game), ("move20", mid)):
            config = SearchConfig(strategy=strategy, leaves_per_batch=k, playouts_per_leaf=lpl, backend=backend,
                                  threads=args.threads)
            if not args.defaults:
                config = dataclasses.replace(config, playout_policy="light", bias_c2=0.0, prior_pattern=0.0,
                                             late_playout_policy=None)
            searcher = Searcher(position.rules, config, seed=1)
            searcher.search(position, SearchLimits(playouts=k * lpl))  # warm-up / compile
            done, seconds = 0, 0.0
            for _ in range(args.repeats):
                searcher.reset()
                result = searcher.search(position, SearchLimits(playouts=args.playouts))
                done += result.playouts
                seconds += result.seconds
            rate = done / seconds
            print(json.dumps({"bench": "search", "device": device, "backend": backend, "strategy": strategy,
                              "position": label,
                              "size": args.size, "batch": k * lpl, "playouts_per_move": args.playouts,
                              "config": "defaults" if args.defaults else "light",
                              "playouts_per_s": round(rate, 1),
                              "raw_playouts_per_s": round(raw, 1), "ratio": round(rate / raw, 3),
                              "tree_nodes": int(searcher.tree.size) if searcher.tree is not None else None}),
                  flush=True)
    return 0


def raw_rate(game, k: int, lpl: int, repeats: int, policy: str = "light", backend: str = "auto",
             threads: int = 0) -> float:
    """Playouts/s of the evaluator (``policy``, ``backend``) on K copies of the position x L playouts, after a
    warm-up call; enough calls for about half a second."""
    evaluator = make_evaluator(policy, backend=backend, threads=threads)
    states = stack_state(game.state, k)
    evaluator.dispatch(states, jax.random.PRNGKey(0), lpl, 7.5).ready()
    calls, start = 0, time.perf_counter()
    while calls < repeats * 4 or time.perf_counter() - start < 0.5:
        evaluator.dispatch(states, jax.random.PRNGKey(calls + 1), lpl, 7.5).ready()
        calls += 1
    return calls * k * lpl / (time.perf_counter() - start)


if __name__ == "__main__":
    main()
