"""Territory pictures in the style of the paper's Figures 2-3: stones as circles, and at every point a
square whose size is |E[s]| and whose colour is the predicted owner (black / white)."""
from __future__ import annotations

import numpy as np


def draw_territory(ax, stones, values, title: str = "") -> None:
    """stones int [N, N] (+1/-1/0), values float [N, N] in [-1, 1] (+1 Black), row 0 at the top."""
    n = stones.shape[0]
    ax.set_facecolor("#d9b26f")
    for k in range(n):
        ax.plot([0, n - 1], [k, k], color="#6b5030", lw=0.5, zorder=1)
        ax.plot([k, k], [0, n - 1], color="#6b5030", lw=0.5, zorder=1)
    for r in range(n):
        for c in range(n):
            y = n - 1 - r
            if stones[r, c]:
                ax.add_patch(_circle(c, y, stones[r, c]))
            v = float(values[r, c])
            side = 0.8 * abs(v)
            if side > 0.02:
                col = "black" if v > 0 else "white"
                edge = "white" if (v > 0 and stones[r, c] > 0) else "black"
                ax.add_patch(_square(c, y, side, col, edge))
    ax.set_xlim(-0.7, n - 0.3)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title, fontsize=9)


def _circle(x, y, colour):
    from matplotlib.patches import Circle
    return Circle((x, y), 0.46, facecolor="black" if colour > 0 else "white", edgecolor="black", lw=0.6,
                  zorder=2)


def _square(x, y, side, colour, edge):
    from matplotlib.patches import Rectangle
    return Rectangle((x - side / 2, y - side / 2), side, side, facecolor=colour, edgecolor=edge, lw=0.4, zorder=3)


def save_panels(stones, panels, out: str, suptitle: str = "") -> None:
    """panels: list of (title, values [N, N]) drawn side by side into one PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cols = min(len(panels), 3)
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 5.4 * rows), squeeze=False)
    axes = axes.reshape(-1)
    for ax in axes[len(panels):]:
        ax.axis("off")
    for ax, (title, v) in zip(axes, panels):
        draw_territory(ax, stones, v, title)
    if suptitle:
        fig.suptitle(suptitle, fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.97) if suptitle else None)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def show_sgf(data: bytes, move, models, sweeps: int, playouts: int, out: str, truth: bool = False) -> None:
    """Panels for an SGF position: each model with loopy BP and Swendsen-Wang (exact too up to 11x11),
    plus playout ownership when playouts > 0, plus the GNU Go final outcome of the game when truth."""
    from jaxgo.crf.evaluator import load_model
    from jaxgo.crf.predict import marginals
    from jaxgo.go.config import Rules
    from jaxgo.go.sgf import load_sgf, replay

    rec = load_sgf(data)
    game = replay(rec, Rules(size=rec.size, komi=rec.komi, ko_rule="simple"), move)
    n = game.size
    stones = np.asarray(game.board()).reshape(n, n)
    flat = stones.reshape(1, -1).astype(np.int32)
    panels = []
    methods = ["bp", "sw"] + (["exact"] if n <= 11 else [])
    for m in models:
        name, params = load_model(m)
        for inf in methods:
            p = marginals(params, name, flat, n, inf, sweeps=sweeps)[0]
            panels.append((f"{name.upper()} ({inf})", (2 * p - 1).reshape(n, n)))
    if playouts > 0:
        from jaxgo.search.ownership import ownership_estimate
        panels.append((f"playout ownership ({playouts})", ownership_estimate(game, playouts=playouts)))
    if truth:
        from jaxgo.crf.labels import territory_labels
        panels.append(("final outcome (GNU Go)", territory_labels(data)[2].reshape(n, n).astype(np.float32)))
    save_panels(stones, panels, out, f"position before move {move or len(rec.moves) + 1}")
