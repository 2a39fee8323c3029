"""``jaxgo demo``: the main job on an embedded default.

1. The light-playout benchmark on the default device (9x9 and 19x19, JSON lines as ``jaxgo bench``).
2. A short game on 9x9 played through ``jaxgo.go.game`` (positional superko, area scoring), printed as a board.
   Default engine (``--engine rave``): the engine of ``jaxgo gtp`` with its default ``SearchConfig``: the
   ``jaxgo.search.player.Player`` (move choice, pass and resign rules) over RAVE with heavy playouts,
   progressive bias and virtual RAVE experience, all from the move model shipped in the package (Bradley-Terry
   gammas of 3x3 patterns and tactical features, trained on KGS games), and MoGo-style rule playouts once stones
   cover 45% of the board, ``--playouts`` playouts per move; it resigns below a
   ``RESIGN_BELOW`` win rate.  ``--engine flat``: flat Monte Carlo, each legal move gets ``--playouts`` light
   playouts in one device call and the best win rate is played.
"""

from __future__ import annotations

import argparse
import sys
import time

# A quick demo game (the engine's own default, search.limits.DEFAULT_PLAYOUTS, takes six times as long).
DEMO_PLAYOUTS = 512
FLAT_DEMO_PLAYOUTS = 32  # per candidate move


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="jaxgo demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=9, help="board size of the demo game (default 9)")
    parser.add_argument("--engine", choices=["rave", "flat"], default="rave",
                        help="rave: the default engine (RAVE, heavy playouts, progressive bias from the shipped "
                             "gammas); flat: flat Monte Carlo")
    parser.add_argument("--playouts", type=int, default=None,
                        help=f"playouts per move (rave, default {DEMO_PLAYOUTS}) or per candidate move (flat, default "
                             f"{FLAT_DEMO_PLAYOUTS})")
    parser.add_argument("--max-moves", type=int, default=160, help="stop the demo game after this many moves")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-bench", action="store_true", help="skip the benchmark")
    return parser.parse_args(argv)


RESIGN_BELOW = 0.05


def flat_monte_carlo_move(game, playouts: int, key) -> tuple[int, float]:
    """(move, win rate): the legal move with the best light-playout win rate for the side to move.

    Pass is chosen when it does as well as the best move (so a won game is not spent filling one's own
    territory); other ties are broken at random.
    """
    import jax.numpy as jnp
    import numpy as np

    from jaxgo.go.kernels import kernels
    from jaxgo.playouts.xla import light as playout

    color = game.to_play
    legal = game.legal_moves(color)
    # Every move (pass included) is evaluated so the shapes never change; illegal ones are masked afterwards.
    children = kernels(game.rules.suicide).children(game.state, jnp.arange(legal.shape[0], dtype=jnp.int32))
    result = playout.run(children, key, game.rules.komi, num_per_state=playouts)
    wins = np.asarray(result.winner == color).reshape(legal.shape[0], playouts).mean(axis=1)
    wins = np.where(legal, wins, -1.0)
    best = wins.max()
    if wins[-1] >= best:
        return legal.shape[0] - 1, float(best)
    ties = np.flatnonzero(wins == best)
    tie_break = np.random.default_rng(np.asarray(key).astype(np.uint64).sum())
    return int(tie_break.choice(ties)), float(best)


def play_demo_game(size: int, playouts: int, max_moves: int, seed: int, engine: str = "rave") -> None:
    import jax

    from jaxgo.go.coords import color_name, colour_letter, point_to_gtp
    from jaxgo.go.display import board_text
    from jaxgo.go.game import new_game
    from jaxgo.search.config import SearchConfig
    from jaxgo.search.player import RESIGN, Player

    game = new_game(size=size, komi=7.5)
    key = jax.random.PRNGKey(seed)
    config = SearchConfig(resign_threshold=RESIGN_BELOW, resign_min_playouts=playouts)  # the default engine
    player = Player(config, seed=seed, playouts=playouts)
    start = time.perf_counter()
    resigned = None
    while not game.is_over() and len(game.moves) < max_moves:
        key, sub = jax.random.split(key)
        color = game.to_play
        if engine == "flat":
            move, win_rate = flat_monte_carlo_move(game, playouts, sub)
            if win_rate < RESIGN_BELOW and len(game.moves) > size * 2:
                resigned = color
                break
        else:
            decision = player.choose(game, color)
            if decision.move == RESIGN:
                resigned = color
                break
            move = decision.move
            win_rate = decision.result.win_rate if decision.result is not None else float("nan")
        game.play(color, move)
        print(f"{len(game.moves):3d}. {color_name(color):5s} {point_to_gtp(move, size):4s} "
              f"win rate {win_rate:.2f}", file=sys.stderr)
    elapsed = time.perf_counter() - start
    last = game.moves[-1][1] if game.moves else None
    print(board_text(game.board(), last))
    score = game.score()
    result = "B+%g" % score if score > 0 else ("W+%g" % -score if score < 0 else "0")
    if resigned is not None:
        result = colour_letter(-resigned) + f"+Resign ({color_name(resigned)} resigned; area count {result})"
    how = (f"flat Monte Carlo, {playouts} playouts per candidate" if engine == "flat" else
           f"{config.for_size(size).describe()}, {playouts} playouts per move")
    print(f"\n{len(game.moves)} moves in {elapsed:.1f} s ({how}); "
          f"captures B {game.captures(1)} W {game.captures(-1)}; Tromp-Taylor result {result}")


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    from jaxgo import bench

    if not args.no_bench:
        print("== light playout benchmark (default device) ==", flush=True)
        bench.main(["playouts", "--size", "9", "19", "--repeats", "2"])
    print(f"\n== demo game on {args.size}x{args.size} ==", flush=True)
    playouts = args.playouts or (FLAT_DEMO_PLAYOUTS if args.engine == "flat" else DEMO_PLAYOUTS)
    play_demo_game(args.size, playouts, args.max_moves, args.seed, args.engine)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
