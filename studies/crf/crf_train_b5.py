"""Train Boltzmann5 by ML with loopy-BP expectations on GNU Go labels (from `jaxgo territory label`)
and print the learnt parameters next to the paper's.  Also prints the per-point cross-entropy
(bits) of BP predictions on the same positions for the learnt and the paper's parameters.
Usage: python studies/crf/crf_train_b5.py --labels /tmp/crf_labels.npz --move 80 --steps 150"""
import argparse
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax.numpy as jnp
import numpy as np

from jaxgo.crf.bp import loopy_bp
from jaxgo.crf.models import B5_NAMES, B5_PAPER, b5_log_potentials
from jaxgo.crf.train import train_b5_bp


def xent_bits(params, c, lab):
    p = np.clip(np.asarray(loopy_bp(b5_log_potentials(jnp.asarray(params), c, 19), 19)), 1e-6, 1 - 1e-6)
    m = lab != 0                                    # neutral points excluded
    ll = np.where(lab > 0, np.log2(p), np.log2(1 - p))
    return float(-(ll * m).sum() / m.sum()), float(((p > 0.5) == (lab > 0))[m].mean())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--labels", default="/tmp/crf_labels.npz")
    ap.add_argument("--move", type=int, default=80)
    ap.add_argument("--steps", type=int, default=150)
    a = ap.parse_args()
    d = np.load(a.labels)
    c = jnp.asarray(d[f"moves{a.move}"], jnp.int32)
    lab = d["labels"]
    # neutral points (0) get a random-free convention: assign Black index 0 half... use White index
    s = jnp.asarray(np.where(lab > 0, 0, 1), jnp.int32)
    params = np.asarray(train_b5_bp(c, s, 19, steps=a.steps, lr=0.05))
    print(f"{len(lab)} positions at move {a.move}, {a.steps} Adam steps (lr 0.05), BP I=50 eps=0.5")
    print(f"{'parameter':16s} {'learnt':>8s} {'paper':>8s}")
    for nme, v, pv in zip(B5_NAMES, params, B5_PAPER):
        print(f"{nme:16s} {v:8.3f} {pv:8.3f}")
    for nme, p in (("learnt", params), ("paper", B5_PAPER)):
        x, acc = xent_bits(p, c, lab)
        print(f"{nme}: BP per-point cross-entropy {x:.3f} bits, sign accuracy {acc:.3f} (training positions)")


if __name__ == "__main__":
    main()
