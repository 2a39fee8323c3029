"""9x9 move choice: BPIP control (QSS / TRQSS, playout leaves) vs MCTS RAVE at equal playout budgets (issue 7).

Positions come from MCTS self-play; the reference move of each is a long RAVE search.  For every budget and
method the controller runs first and MCTS then gets exactly the playouts the controller used.

Usage: python studies/bpip/bpip_go_compare.py [--positions 12] [--budgets 2000 6000] [--reference 20000]
                                         [--out results.json] [--plot docs/figures/bpip_go.png]
"""

from __future__ import annotations

import argparse
import json
import sys

from jaxgo.bpip import go_compare as G


def summary(records: list[dict]) -> list[dict]:
    """Agreement rate and mean reference win rate of the chosen move per (budget, method)."""
    out = []
    keys = sorted({(r["budget"], r["method"]) for r in records})
    for budget, method in keys:
        rs = [r for r in records if r["budget"] == budget and r["method"] == method]

        def mean(xs):
            xs = [x for x in xs if x is not None]
            return round(sum(xs) / len(xs), 4) if xs else None

        out.append({"budget": budget, "method": method, "positions": len(rs),
                    "playouts": round(sum(r["bpip_playouts"] for r in rs) / len(rs)),
                    "expansions": round(sum(r["bpip_expansions"] for r in rs) / len(rs), 1),
                    "bpip_agree": sum(r["bpip_agree"] for r in rs), "mcts_agree": sum(r["mcts_agree"] for r in rs),
                    "bpip_ref_value": mean(r["bpip_ref_value"] for r in rs),
                    "mcts_ref_value": mean(r["mcts_ref_value"] for r in rs),
                    "reference_value": mean(r["reference_win_rate"] for r in rs)})
    return out


def table(rows: list[dict]) -> str:
    lines = ["| budget | method | positions | mean playouts | mean expansions | BPIP = ref | MCTS = ref | "
             "ref win rate of BPIP move | of MCTS move | of ref move |", "|" + "---|" * 10]
    for r in rows:
        lines.append(f"| {r['budget']} | {r['method']} | {r['positions']} | {r['playouts']} | {r['expansions']} | "
                     f"{r['bpip_agree']} | {r['mcts_agree']} | {r['bpip_ref_value']} | {r['mcts_ref_value']} | "
                     f"{r['reference_value']} |")
    return "\n".join(lines)


def plot(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    methods = sorted({r["method"] for r in rows})
    for i, method in enumerate(methods):
        rs = [r for r in rows if r["method"] == method]
        xs = [r["playouts"] for r in rs]
        axes[0].plot(xs, [r["bpip_agree"] / r["positions"] for r in rs], "o-", label=f"BPIP {method}")
        axes[1].plot(xs, [r["bpip_ref_value"] for r in rs], "o-", label=f"BPIP {method}")
        if i == 0:  # MCTS gets the controller's playouts; QSS and TRQSS used the same numbers here
            axes[0].plot(xs, [r["mcts_agree"] / r["positions"] for r in rs], "ks--", label="MCTS rave, same playouts")
            axes[1].plot(xs, [r["mcts_ref_value"] for r in rs], "ks--", label="MCTS rave, same playouts")
    axes[1].plot([r["playouts"] for r in rows], [r["reference_value"] for r in rows], "k:", label="reference move")
    axes[0].set_xlabel("playouts per move")
    axes[0].set_ylabel("fraction choosing the reference move")
    axes[1].set_xlabel("playouts per move")
    axes[1].set_ylabel("reference search's win rate of the chosen move")
    axes[0].set_ylim(0, 1)
    for ax in axes:
        ax.set_xscale("log")
        ax.legend(fontsize=7)
    fig.suptitle(f"9x9 move choice, {rows[0]['positions']} self-play positions: BPIP control vs MCTS (RAVE)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--positions", type=int, default=12)
    p.add_argument("--budgets", type=int, nargs="+", default=[2000, 6000])
    p.add_argument("--methods", nargs="+", default=["qss", "trqss"])
    p.add_argument("--reference", type=int, default=20000)
    p.add_argument("--playouts-per-leaf", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out")
    p.add_argument("--plot")
    p.add_argument("--replot", help="only redraw --plot (and print the table) from a previous --out JSON")
    p.add_argument("--reuse", help="positions and reference searches from a previous --out JSON")
    a = p.parse_args(argv)
    if a.replot:
        with open(a.replot) as f:
            rows = json.load(f)["summary"]
        print(table(rows))
        if a.plot:
            plot(rows, a.plot)
        return 0
    references = None
    if a.reuse:
        with open(a.reuse) as f:
            old = json.load(f)
        positions = old["positions"][: a.positions]
        by_pos = {r["position"]: r.get("reference_search") or  # older files: the reference move only
                  {"move": r["reference"], "win_rate": r["reference_win_rate"], "values": []} for r in old["records"]}
        references = [by_pos[i] for i in range(len(positions))]
    else:
        positions = G.test_positions(a.positions, seed=a.seed)
    records = G.compare(positions, a.budgets, a.reference, tuple(a.methods), a.playouts_per_leaf, a.seed,
                        log=lambda r: print(json.dumps(r), flush=True), references=references)
    rows = summary(records)
    print(table(rows))
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"records": records, "summary": rows, "positions": positions}, f, indent=1)
    if a.plot:
        plot(rows, a.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
