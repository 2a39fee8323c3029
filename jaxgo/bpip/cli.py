"""``jaxgo bpip``: decision-theoretic search control experiments.

  jaxgo bpip chess [--method qss|trqss|atrqss|negamax|alphabeta] [--position paper|mirror|...|FEN] [--json]
  jaxgo bpip verify [--depth 9] [--position ...]     (plain alpha-beta: which first moves win)
  jaxgo bpip go [--moves "E5 C4 ..."] [--method qss|trqss|atrqss] [--budget 3000] [--playouts-per-leaf 8]
                [--size 9] [--komi 7.5] [--mcts] [--json]
      9x9 move choice with playout-based leaf distributions; --mcts also runs MCTS (RAVE) with the playouts
      the controller used (rounded up to MCTS's batch of 32 x 4).
"""

from __future__ import annotations

import argparse
import json

from jaxgo.bpip.tree import Settings

WIN_THRESHOLD = 5.0  # a depth-limited value >= 5 pawns counts as a win (a queen against pawns)


def chess_settings(args) -> Settings:
    """Controller settings from the command line (defaults documented in docs/bpip.md)."""
    return Settings(
        alpha=args.alpha,
        gamma=args.gamma,
        cost_per_etu=args.cost,
        max_expansions=args.max_expansions,
        sim_scale=args.sim_scale,
        seed=args.seed,
        adapt_rate=args.adapt_rate,
        trace=True,
    )


def _position(name: str) -> str:
    from jaxgo.bpip.chess_domain import OTHER_POSITIONS, POSITIONS

    return POSITIONS.get(name) or OTHER_POSITIONS.get(name) or name


def run_chess(args) -> dict:
    """One chess experiment; returns the JSON-able record."""
    from jaxgo.bpip import chess_domain as cd

    chess = cd.require_chess()
    board = chess.Board(_position(args.position))
    if args.method in ("negamax", "alphabeta"):
        domain = cd.ChessDomain(potential_decay=args.decay, spread=args.spread)  # plain material (the paper's)
        depth = args.depth or (9 if args.method == "alphabeta" else 5)
        r = cd.root_search(domain, board, depth, pruning=args.method == "alphabeta")
        return {
            "method": args.method,
            "position": board.fen(),
            "move": r["move"],
            "expansions": r["expansions"],
            "leaves": r["leaves"],
            "time_units": r["expansions"],
            "depth": depth,
            "value": r["value"],
            "seconds": round(r["seconds"], 3),
        }
    from jaxgo.bpip.control import run_search

    domain = cd.ChessDomain(potential_decay=args.decay, spread=args.spread, evaluator=args.evaluator)
    res = run_search(domain, board, args.method, chess_settings(args))
    return {
        "method": args.method,
        "position": board.fen(),
        "move": res.move_name,
        "expansions": res.expansions,
        "adaptations": res.adaptations,
        "time_units": res.time_units,
        "settled_at": res.settled_at(),
        "adaptation_steps": [i for i, (kind, _d) in enumerate(res.log) if kind == "a"],
        "q_value": round(res.q_value, 6),
        "root_values": {k: round(v, 4) for k, v in res.root_values.items()},
        "stop_reason": res.stop_reason,
        "seconds": round(res.seconds, 3),
        "settings": {"evaluator": args.evaluator, "alpha": args.alpha, "gamma": args.gamma,
                     "cost_per_etu": args.cost, "decay": args.decay, "spread": args.spread,
                     "max_expansions": args.max_expansions, "sim_scale": args.sim_scale,
                     "adapt_rate": args.adapt_rate},
    }


def run_verify(args) -> dict:
    """Exact depth-limited value of every first move (full-window alpha-beta)."""
    from jaxgo.bpip import chess_domain as cd

    chess = cd.require_chess()
    board = chess.Board(_position(args.position))
    r = cd.root_search(cd.ChessDomain(), board, args.depth or 9, exact_root=True)
    winning = sorted(m for m, v in r["values"].items() if v >= WIN_THRESHOLD)
    return {"position": board.fen(), "depth": r["depth"], "values": r["values"], "winning_moves": winning,
            "leaves": r["leaves"], "seconds": round(r["seconds"], 2)}


def run_go(args) -> dict:
    """One Go move choice by the BPIP controller (and optionally MCTS at the same playout budget)."""
    from jaxgo.bpip import go_compare as G
    from jaxgo.go.coords import gtp_to_point, point_to_gtp

    try:
        moves = [gtp_to_point(v, args.size) for v in args.moves.split()]
        G.game_from_moves(moves, args.size, args.komi)
    except ValueError as exc:  # also jaxgo.go.game.IllegalMove
        raise ValueError(f"bad --moves {args.moves!r}: {exc}") from exc
    b = G.bpip_move(moves, args.budget, args.method, args.playouts_per_leaf, seed=args.seed, size=args.size,
                    komi=args.komi, cost=args.cost, z=args.z, alpha=args.alpha)
    record = {"method": args.method, "moves": args.moves, "move": point_to_gtp(b["move"], args.size),
              "expansions": b["expansions"], "playouts": b["playouts"], "time_units": b["expansions"],
              "stop_reason": b["stop"], "seconds": round(b["seconds"], 2),
              "root_values": {k: round(v, 4) for k, v in sorted(b["root_values"].items(), key=lambda kv: -kv[1])[:5]}}
    if args.mcts:
        m = G.mcts_move(moves, b["playouts"], seed=args.seed, size=args.size, komi=args.komi)
        record["mcts"] = {"move": point_to_gtp(m["move"], args.size) if m["move"] >= 0 else "resign",
                          "win_rate": round(m["win_rate"], 4), "playouts": m["playouts"],
                          "seconds": round(m["seconds"], 2)}
    return record


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="jaxgo bpip", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("go")
    g.add_argument("--moves", default="", help="moves from the empty board, GTP vertices (PASS allowed)")
    g.add_argument("--method", default="qss", choices=["qss", "trqss", "atrqss"])
    g.add_argument("--budget", type=int, default=3000, help="playouts")
    g.add_argument("--playouts-per-leaf", type=int, default=8)
    g.add_argument("--size", type=int, default=9)
    g.add_argument("--komi", type=float, default=7.5)
    g.add_argument("--cost", type=float, default=1e-4, help="value units per ETU")
    g.add_argument("--z", type=float, default=2.0, help="staircase outer spikes at M +- z standard errors")
    g.add_argument("--alpha", type=float, default=0.5)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--mcts", action="store_true", help="also MCTS (rave) with the same playouts")
    g.add_argument("--json", action="store_true")
    for name in ("chess", "verify"):
        p = sub.add_parser(name)
        p.add_argument("--position", default="paper", help="paper, mirror, outside-passer, king-race or a FEN")
        p.add_argument("--depth", type=int, default=0, help="plies for negamax/alphabeta/verify (0: default)")
        p.add_argument("--json", action="store_true", help="print one JSON object")
        if name == "chess":
            p.add_argument("--method", default="qss", choices=["qss", "trqss", "atrqss", "negamax", "alphabeta"])
            p.add_argument("--alpha", type=float, default=0.5, help="staircase central weight")
            p.add_argument("--gamma", type=float, default=0.5, help="future-utility discount")
            p.add_argument("--cost", type=float, default=0.003, help="value units (pawns) per ETU")
            p.add_argument("--evaluator", default="race", choices=["race", "material"],
                           help="leaf evaluator of the controllers (baselines always use material)")
            p.add_argument("--adapt-rate", type=float, default=0.3, help="Adapter LMS step")
            p.add_argument("--decay", type=float, default=0.7, help="promotion-potential decay per step")
            p.add_argument("--spread", type=float, default=0.5, help="constant bound spread (pawns)")
            p.add_argument("--max-expansions", type=int, default=300)
            p.add_argument("--sim-scale", type=float, default=10.0, help="sim = 1/(1 + hamming/scale)")
            p.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        runner = {"chess": run_chess, "verify": run_verify, "go": run_go}[args.command]
        record = runner(args)
    except (ImportError, ValueError) as exc:
        print(f"jaxgo bpip: {exc}")
        return 2
    if args.json:
        print(json.dumps(record))
    else:
        for k, v in record.items():
            print(f"{k}: {v}")
    return 0
