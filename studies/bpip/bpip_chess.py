"""Chess pawn-ending experiment for the BPIP controller (issue 7): the paper's Table 3 and the other endings.

Usage: python studies/bpip/bpip_chess.py [--out results.json] [--plot docs/figures/bpip_chess.png]
                                    [--max-expansions 300] [--quick]
Prints one JSON object per run and the Markdown tables recorded in docs/bpip.md.  ``--quick`` runs only the
paper position with the main settings (about 2 minutes on a shared 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import sys

from jaxgo.bpip import chess_domain as cd
from jaxgo.bpip.control import run_search
from jaxgo.bpip.tree import Settings

# (label, evaluator, method, settings overrides); MAIN is the Table-3 configuration of docs/bpip.md
MAIN = {"gamma": 0.5, "cost_per_etu": 0.003}
ADAPT = {"gamma": 0.9, "cost_per_etu": 0.01, "sim_scale": 40.0}  # adaptation wins the relevance comparison
CONFIGS = [
    ("qss", "race", "qss", MAIN),
    ("trqss", "race", "trqss", MAIN),
    ("atrqss", "race", "atrqss", MAIN),
    ("trqss g0.9", "race", "trqss", ADAPT),
    ("atrqss g0.9", "race", "atrqss", ADAPT),
    ("atrqss g0.9 rate0.05", "race", "atrqss", {**ADAPT, "adapt_rate": 0.05}),
    ("qss material-eval", "material", "qss", MAIN),
    ("trqss material-eval", "material", "trqss", MAIN),
]
OTHER_CONFIGS = CONFIGS[:5]


def run_one(name: str, fen: str, label: str, evaluator: str, method: str, overrides: dict, max_expansions: int,
            winning: list[str]) -> dict:
    chess = cd.require_chess()
    board = chess.Board(fen)
    settings = Settings(max_expansions=max_expansions, trace=True, **overrides)
    res = run_search(cd.ChessDomain(evaluator=evaluator), board, method, settings)
    return {"position": name, "method": label, "move": res.move_name, "expansions": res.expansions,
            "time_units": res.time_units, "adaptations": res.adaptations,
            "adapted_at": [i for i, (k, _d) in enumerate(res.log) if k == "a"],
            "settled_at": res.settled_at(), "stop": res.stop_reason, "seconds": round(res.seconds, 1),
            "value": round(res.root_values[res.move_name], 2), "winning_moves_9ply": winning,
            "found": res.move_name in winning if winning else None}


def run_all(max_expansions: int, quick: bool) -> list[dict]:
    chess = cd.require_chess()
    records = []
    positions = dict(cd.POSITIONS) if quick else {**cd.POSITIONS, **cd.OTHER_POSITIONS}
    for name, fen in positions.items():
        board = chess.Board(fen)
        win = cd.winning_moves(cd.ChessDomain(), board, 9)["winning"]
        if name in cd.POSITIONS:
            ab = cd.root_search(cd.ChessDomain(), board, 9)
            rec = {"position": name, "method": "alphabeta-9 (material)", "move": ab["move"],
                   "expansions": ab["expansions"], "leaves": ab["leaves"], "time_units": ab["expansions"],
                   "seconds": round(ab["seconds"], 1), "value": ab["value"], "winning_moves_9ply": win,
                   "found": ab["move"] in win}
            records.append(rec)
            print(json.dumps(rec), flush=True)
        configs = CONFIGS[:3] if quick else (CONFIGS if name in cd.POSITIONS else OTHER_CONFIGS)
        for label, evaluator, method, overrides in configs:
            rec = run_one(name, fen, label, evaluator, method, overrides, max_expansions, win)
            records.append(rec)
            print(json.dumps(rec), flush=True)
    return records


def table(records: list[dict]) -> str:
    lines = ["| position | method | move | 9-ply winning moves | Exp | TU | adaptations (at step) | choice settled "
             "after Exp | stop | value | s |", "|" + "---|" * 11]
    for r in records:
        ad = r.get("adaptations", "-")
        if r.get("adapted_at"):
            ad = f"{ad} ({','.join(map(str, r['adapted_at']))})"
        lines.append(f"| {r['position']} | {r['method']} | {r['move']} | {','.join(r['winning_moves_9ply']) or '-'} "
                     f"| {r['expansions']} | {r['time_units']:g} | {ad} | {r.get('settled_at', '-')} "
                     f"| {r.get('stop', '-')} | {r.get('value', '-')} | {r['seconds']} |")
    return "\n".join(lines)


def plot(records: list[dict], path: str) -> None:
    """Paper position: expansions to stop and to settle on the final choice per method, paper's Table 3 beside."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paper = {"qss": (89, 89), "trqss": (66, 66), "atrqss": (51, 61)}
    rs = [r for r in records if r["position"] == "paper" and "alphabeta" not in r["method"]]
    fig, ax = plt.subplots(figsize=(10, 4.2))
    xs = range(len(rs))
    ax.bar([x - 0.3 for x in xs], [r["expansions"] for r in rs], 0.2, label="expansions (this run)")
    ax.bar([x - 0.1 for x in xs], [r["time_units"] for r in rs], 0.2, label="time units (this run)")
    ax.bar([x + 0.1 for x in xs], [r["settled_at"] or 0 for r in rs], 0.2, label="expansions until the choice settled")
    ax.bar([x + 0.3 for x in xs], [paper.get(r["method"], (0, 0))[1] for r in rs], 0.2, label="paper TU (Table 3)")
    ax.set_xticks(list(xs), [f"{r['method']}\n{r['move']}" + (" ok" if r.get("found") else " x") for r in rs],
                  fontsize=7)
    ax.set_ylabel("expansion time units")
    ax.set_title("Paper pawn ending (1.b6! wins): BPIP controllers, chosen move under each bar")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out")
    p.add_argument("--plot")
    p.add_argument("--max-expansions", type=int, default=300)
    p.add_argument("--quick", action="store_true")
    a = p.parse_args(argv)
    records = run_all(a.max_expansions, a.quick)
    print(table(records))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(records, f, indent=1)
    if a.plot:
        plot(records, a.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
