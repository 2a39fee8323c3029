"""Reproduce the paper's Figure 1 on 9x9: |running-average marginal - exact| per point vs sweeps,
Gibbs vs Swendsen-Wang, Boltzmann5 with the paper's parameters.  Exact marginals by frontier
(row-by-row) variable elimination.  Usage: python studies/crf/crf_figure1.py [--sweeps 2000] [--out PNG]"""
import argparse
import os
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax
import jax.numpy as jnp
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from jaxgo.crf.exact import frontier_marginals
from jaxgo.crf.models import B5_PAPER, b5_log_potentials
from jaxgo.crf.sampling import sample_marginals


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweeps", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="docs/figures/crf_figure1.png")
    a = ap.parse_args()
    n = 9
    rng = np.random.default_rng(a.seed)
    c = jnp.asarray(rng.choice([0, 1, -1], size=(1, n * n), p=[.6, .2, .2]), jnp.int32)
    lp = b5_log_potentials(jnp.asarray(B5_PAPER), c, n)
    t = time.time()
    exact, _ = frontier_marginals(lp, n)
    exact = np.asarray(exact)[0]
    print(f"exact 9x9 (incl. compile): {time.time() - t:.2f}s")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, m, title in zip(axes, ("gibbs", "sw"), ("(a) Gibbs sampling", "(b) Swendsen-Wang")):
        t = time.time()
        _, _, tr = sample_marginals(jax.random.PRNGKey(a.seed), lp, n, sweeps=a.sweeps, method=m, trace=True)
        tr = np.asarray(tr)[:, 0]                      # [sweeps, P]
        dt = time.time() - t
        err = tr - exact[None]
        ax.plot(np.arange(1, a.sweeps + 1), err, lw=0.5)
        ax.set_xscale("log")
        ax.set_title(title)
        ax.set_xlabel("whole-board sweeps")
        print(f"{m}: {a.sweeps} sweeps {dt:.2f}s (incl. compile); max |err| at end {np.abs(err[-1]).max():.4f}, "
              f"mean {np.abs(err[-1]).mean():.4f}; at 100 sweeps max {np.abs(err[99]).max():.4f}")
    axes[0].set_ylabel("running average - exact P(Black)")
    fig.suptitle("Boltzmann5 (paper parameters), random 9x9 position, 81 points")
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
