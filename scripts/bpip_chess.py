"""Chess pawn-ending experiment for the BPIP controller (issue 7): every method on every position.

Usage: python scripts/bpip_chess.py [--out results.json] [--plot docs/figures/bpip_chess.png] [--max-expansions 300]
Prints one JSON object per (position, method) and a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import sys

from jaxgo.search.bpip import chess_domain as cd
from jaxgo.search.bpip.control import run_search
from jaxgo.search.bpip.tree import Settings


# settings under which adaptation does get chosen (gamma 0.9, broader similarity); see docs/bpip.md
ADAPTIVE = {"gamma": 0.9, "sim_scale": 40.0}


def run_all(max_expansions: int, cost: float, decay: float) -> list[dict]:
    """All methods on all positions; returns records."""
    chess = cd.require_chess()
    records = []
    positions = {**cd.POSITIONS, **cd.OTHER_POSITIONS}
    for name, fen in positions.items():
        board = chess.Board(fen)
        win = cd.winning_moves(cd.ChessDomain(), board, 9)
        if name in cd.POSITIONS or name == "mirror":  # plain alpha-beta explodes once the kings are active
            ab = cd.root_search(cd.ChessDomain(), board, 9)
            records.append({"position": name, "method": "alphabeta-9", "move": ab["move"],
                            "expansions": ab["expansions"], "leaves": ab["leaves"], "time_units": ab["expansions"],
                            "seconds": round(ab["seconds"], 2), "winning_moves_9ply": win["winning"]})
        variants = [("qss", {}), ("trqss", {}), ("atrqss", {}), ("atrqss", ADAPTIVE)]
        for method, extra in variants:
            dom = cd.ChessDomain(potential_decay=decay)
            settings = Settings(cost_per_etu=cost, max_expansions=max_expansions, **extra)
            res = run_search(dom, board, method, settings)
            label = method + ("+adapt" if extra else "")
            records.append({"position": name, "method": label, "move": res.move_name,
                            "expansions": res.expansions, "adaptations": res.adaptations,
                            "time_units": res.time_units, "stop": res.stop_reason, "seconds": round(res.seconds, 2),
                            "winning_moves_9ply": win["winning"]})
        for r in records[-5:]:
            print(json.dumps(r), flush=True)
    return records


def table(records: list[dict]) -> str:
    """Markdown table of the records."""
    lines = ["| position | method | move | 9-ply winning moves | expansions | TU | adaptations | stop | s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        lines.append(f"| {r['position']} | {r['method']} | {r['move']} | {','.join(r['winning_moves_9ply']) or '-'} "
                     f"| {r['expansions']} | {r['time_units']:g} | {r.get('adaptations', '-')} | {r.get('stop', '-')} "
                     f"| {r['seconds']} |")
    return "\n".join(lines)


def plot(records: list[dict], path: str) -> None:
    """Expansions per method and position (log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    positions = list(dict.fromkeys(r["position"] for r in records))
    methods = list(dict.fromkeys(r["method"] for r in records))
    records = records + [{"position": p, "method": m, "time_units": 0} for p in positions for m in methods
                         if not any(r["position"] == p and r["method"] == m for r in records)]
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(methods)
    for i, m in enumerate(methods):
        ys = [next(r["time_units"] for r in records if r["position"] == p and r["method"] == m) for p in positions]
        ax.bar([j + i * width for j in range(len(positions))], ys, width, label=m)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(positions))], positions)
    ax.set_yscale("symlog", linthresh=10)
    ax.set_ylabel("time units (expansions; alpha-beta: interior nodes)")
    ax.set_title("BPIP controllers vs 9-ply alpha-beta on pawn endings")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out")
    p.add_argument("--plot")
    p.add_argument("--max-expansions", type=int, default=300)
    p.add_argument("--cost", type=float, default=0.001)
    p.add_argument("--decay", type=float, default=0.7)
    a = p.parse_args(argv)
    records = run_all(a.max_expansions, a.cost, a.decay)
    print(table(records))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(records, f, indent=1)
    if a.plot:
        plot(records, a.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
