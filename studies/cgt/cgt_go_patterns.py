"""Adaptive-pattern failure (thesis section 5.2, Figure 5.4) on a Go position built with the jaxgo engine.

    python studies/cgt/cgt_go_patterns.py --playouts 8192
writes docs/figures/cgt_go_patterns.png and prints the measured weights as JSON.
"""

from __future__ import annotations

import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from jaxgo.cgt.go_patterns import adaptive_pattern_experiment  # noqa: E402

A_COLOURS = {"X": ("C0", "A Black (4 stones rescued)"), "O": ("C3", "A White (4 stones captured)"),
             ".": ("C7", "A still empty")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--playouts", type=int, default=8192)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="docs/figures/cgt_go_patterns.png")
    args = ap.parse_args()
    res = adaptive_pattern_experiment(args.playouts, args.seed)
    rows = [r for r in res["p_patterns"] if r["playouts"] >= 20][:10]
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(13, 5), gridspec_kw={"width_ratios": [1, 1.6]})
    ax0.axis("off")
    ax0.text(0.0, 1.0, "position (Black to play)\n\n" + "\n".join(
        " ".join(("A" if (r, c) == tuple(res["A"]) else "p" if (r, c) == tuple(res["p"]) else
                  "q" if (r, c) == tuple(res["q"]) else ch) for c, ch in enumerate(line.split()))
        for r, line in enumerate(res["position"])), family="monospace", fontsize=12, va="top")
    ax0.text(0.0, 0.28, f"A swing (Black at A vs White at A): {res['A_swing']:.2f}\n"
             f"value of Black p vs White p, A Black: {res['value_of_p_given_A_black']:.2f}\n"
             f"value of Black p vs White p, A White: {res['value_of_p_given_A_white']:.2f}\n"
             f"{res['playouts']} eye-avoiding random playouts", fontsize=10, va="top")
    labels, seen = [], set()
    for k, r in enumerate(rows):
        a = r["pattern"][1][2]  # A is p's right neighbour
        colour, name = A_COLOURS[a]
        ax1.barh(k, r["weight"], color=colour, label=name if name not in seen else None)
        seen.add(name)
        labels.append(" / ".join(r["pattern"]) + f"  (n={r['playouts']})")
    ax1.set_yticks(range(len(rows)), labels, family="monospace", fontsize=8)
    ax1.invert_yaxis()
    ax1.axvline(0, color="k", lw=0.5)
    ax1.set_xlabel("adaptive weight of Black's move at p = mean playout result (Black area − White area)")
    ax1.set_title("3x3 patterns around p when Black played p (rows top/middle/bottom; X Black, O White)", fontsize=10)
    ax1.legend(fontsize=8, loc="lower right")
    ax1.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(json.dumps({k: v for k, v in res.items() if k not in ("position",)}, indent=1))


if __name__ == "__main__":
    main()
