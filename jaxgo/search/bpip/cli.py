"""``jaxgo bpip``: decision-theoretic search control experiments.

  jaxgo bpip chess [--method qss|trqss|atrqss|negamax|alphabeta] [--position paper|mirror|...|FEN] [--json]
  jaxgo bpip verify [--depth 9] [--position ...]     (plain alpha-beta: which first moves win)
"""

from __future__ import annotations

import argparse
import json

from jaxgo.search.bpip.tree import Settings

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
    )


def _position(name: str) -> str:
    from jaxgo.search.bpip.chess_domain import OTHER_POSITIONS, POSITIONS

    return POSITIONS.get(name) or OTHER_POSITIONS.get(name) or name


def run_chess(args) -> dict:
    """One chess experiment; returns the JSON-able record."""
    from jaxgo.search.bpip import chess_domain as cd

    chess = cd.require_chess()
    board = chess.Board(_position(args.position))
    domain = cd.ChessDomain(potential_decay=args.decay, spread=args.spread)
    if args.method in ("negamax", "alphabeta"):
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
    from jaxgo.search.bpip.control import run_search

    res = run_search(domain, board, args.method, chess_settings(args))
    return {
        "method": args.method,
        "position": board.fen(),
        "move": res.move_name,
        "expansions": res.expansions,
        "adaptations": res.adaptations,
        "time_units": res.time_units,
        "q_value": round(res.q_value, 6),
        "root_values": {k: round(v, 4) for k, v in res.root_values.items()},
        "stop_reason": res.stop_reason,
        "seconds": round(res.seconds, 3),
        "settings": {"alpha": args.alpha, "gamma": args.gamma, "cost_per_etu": args.cost, "decay": args.decay,
                     "spread": args.spread, "max_expansions": args.max_expansions,
                     "sim_scale": args.sim_scale},
    }


def run_verify(args) -> dict:
    """Exact depth-limited value of every first move (full-window alpha-beta)."""
    from jaxgo.search.bpip import chess_domain as cd

    chess = cd.require_chess()
    board = chess.Board(_position(args.position))
    r = cd.root_search(cd.ChessDomain(), board, args.depth or 9, exact_root=True)
    winning = sorted(m for m, v in r["values"].items() if v >= WIN_THRESHOLD)
    return {"position": board.fen(), "depth": r["depth"], "values": r["values"], "winning_moves": winning,
            "leaves": r["leaves"], "seconds": round(r["seconds"], 2)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="jaxgo bpip", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("chess", "verify"):
        p = sub.add_parser(name)
        p.add_argument("--position", default="paper", help="paper, mirror, outside-passer, king-race or a FEN")
        p.add_argument("--depth", type=int, default=0, help="plies for negamax/alphabeta/verify (0: default)")
        p.add_argument("--json", action="store_true", help="print one JSON object")
        if name == "chess":
            p.add_argument("--method", default="qss", choices=["qss", "trqss", "atrqss", "negamax", "alphabeta"])
            p.add_argument("--alpha", type=float, default=0.5, help="staircase central weight")
            p.add_argument("--gamma", type=float, default=0.5, help="future-utility discount")
            p.add_argument("--cost", type=float, default=0.001, help="value units per ETU")
            p.add_argument("--decay", type=float, default=0.7, help="promotion-potential decay per step")
            p.add_argument("--spread", type=float, default=0.5, help="constant bound spread (pawns)")
            p.add_argument("--max-expansions", type=int, default=300)
            p.add_argument("--sim-scale", type=float, default=10.0, help="sim = 1/(1 + hamming/scale)")
            p.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        record = run_chess(args) if args.command == "chess" else run_verify(args)
    except ImportError as exc:
        print(f"jaxgo bpip: {exc}")
        return 2
    if args.json:
        print(json.dumps(record))
    else:
        for k, v in record.items():
            print(f"{k}: {v}")
    return 0
