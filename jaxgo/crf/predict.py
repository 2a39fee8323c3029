"""Territory predictions with any inference method, plus the evaluation quantities of the paper.

- `marginals`: P(s_i = Black) [B, P] by loopy BP, Swendsen-Wang / Gibbs sampling or exact elimination.
- `score_samples`: samples of the Black-minus-White area sum(s_i) by Swendsen-Wang, giving the expected
  score u(c) = E[sum_i s_i] and P(Black wins) = P(sum_i s_i > komi) (Section 2 of the paper).
- `cross_entropy`: per-point cross-entropy between outcomes and predictions (Figure 4), neutral points left out.
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.crf.bp import loopy_bp
from jaxgo.crf.clusters import chain_labels
from jaxgo.crf.exact import frontier_marginals
from jaxgo.crf.models import MODELS
from jaxgo.crf.sampling import chain_flip_sweep, fields, gibbs_sweep, sw_sweep

EPS = 1e-4          # predictions are clipped to [EPS, 1 - EPS] before taking logs


@partial(jax.jit, static_argnames=("model", "n", "sweeps", "burn_in", "method"))
def _sample(key, params, stones, model: str, n: int, sweeps: int, burn_in: int, method: str):
    """-> (black counts [B, P], per-sweep sums of s [sweeps, B]).  A "sw" sweep is one Swendsen-Wang
    update followed by whole-chain flips (`sampling.chain_flip_sweep`); "gibbs" is a checkerboard sweep.
    Chains start at their own colour, empty points at random."""
    lp = MODELS[model].log_potentials(params, stones, n)
    J, f = fields(lp, n)
    lab = chain_labels(stones, n)

    def step(k, s, J, f, n):
        if method != "sw":
            return gibbs_sweep(k, s, J, f, n)
        ka, kb = jax.random.split(k)
        return chain_flip_sweep(kb, sw_sweep(ka, s, J, f, n), J, f, n, lab, stones)

    k0, k1, k2 = jax.random.split(key, 3)
    s = jnp.where(jax.random.uniform(k0, f.shape) < 0.5, 1.0, -1.0)
    s = jnp.where(stones != 0, stones.astype(s.dtype), s)
    if burn_in:
        s, _ = jax.lax.scan(lambda s, k: (step(k, s, J, f, n), None), s, jax.random.split(k1, burn_in))

    def body(carry, k):
        s, acc = carry
        s = step(k, s, J, f, n)
        return (s, acc + (s > 0)), s.sum(-1)

    (_, acc), sums = jax.lax.scan(body, (s, jnp.zeros_like(f)), jax.random.split(k2, sweeps))
    return acc, sums


def marginals(params, model: str, stones, n: int, inference: str = "bp", sweeps: int = 200, burn_in: int = 20,
              seed: int = 0, iterations: int = 50, batch: int = 64) -> np.ndarray:
    """stones [B, P] int -> P(s = Black) float [B, P].  Sampled marginals use the smoothed
    estimate (k + 1/2) / (sweeps + 1) so that no point is predicted with certainty."""
    params = jnp.asarray(params, jnp.float32)
    stones = np.asarray(stones, np.int32)
    out = []
    for i in range(0, len(stones), batch):
        c = jnp.asarray(stones[i:i + batch])
        if inference == "bp":
            p = loopy_bp(MODELS[model].log_potentials(params, c, n), n, iterations)
        elif inference in ("sw", "gibbs"):
            k, _ = _sample(jax.random.PRNGKey(seed + i), params, c, model, n, sweeps, burn_in, inference)
            p = (k + 0.5) / (sweeps + 1)
        elif inference == "exact":
            if n > 11:
                raise ValueError("exact inference needs N <= 11 (row frontier of 2^N states)")
            p = frontier_marginals(MODELS[model].log_potentials(params, c, n), n)[0]
        else:
            raise ValueError(f"unknown inference {inference!r}")
        out.append(np.asarray(p))
    return np.concatenate(out) if out else np.zeros((0, n * n), np.float32)


def score_samples(params, model: str, stones, n: int, sweeps: int = 200, burn_in: int = 20, seed: int = 0,
                  batch: int = 64) -> np.ndarray:
    """Samples of sum_i s_i (Black area minus White area) [B, sweeps] by Swendsen-Wang."""
    params = jnp.asarray(params, jnp.float32)
    stones = np.asarray(stones, np.int32)
    out = []
    for i in range(0, len(stones), batch):
        _, sums = _sample(jax.random.PRNGKey(seed + i), params, jnp.asarray(stones[i:i + batch]), model, n,
                          sweeps, burn_in, "sw")
        out.append(np.asarray(sums).T)
    return np.concatenate(out) if out else np.zeros((0, sweeps), np.float32)


def expected_score(samples) -> np.ndarray:
    """u(c) = E[sum_i s_i] [B] from score samples [B, T]."""
    return np.asarray(samples).mean(-1)


def win_probability(samples, komi) -> np.ndarray:
    """P(Black wins) = P(sum_i s_i > komi) [B] from score samples [B, T]; komi scalar or [B]."""
    komi = np.broadcast_to(np.asarray(komi, np.float64), (len(samples),))
    return (np.asarray(samples) > komi[:, None]).mean(-1)


def cross_entropy(p_black, labels, base: float = np.e):
    """Per-position mean cross-entropy [B] between outcome labels [B, P] in {1, -1, 0 (neutral, left out)}
    and predictions P(Black) [B, P]: -(1/N) sum_n [t log p + (1-t) log(1-p)], t = 1 for Black."""
    p = np.clip(np.asarray(p_black, np.float64), EPS, 1 - EPS)
    lab = np.asarray(labels)
    m = lab != 0
    ll = np.where(lab > 0, np.log(p), np.log(1 - p)) / np.log(base)
    return -(ll * m).sum(-1) / np.maximum(m.sum(-1), 1)


def sign_accuracy(p_black, labels):
    """Per-position fraction [B] of non-neutral points whose predicted owner (P > 1/2) is right."""
    lab = np.asarray(labels)
    m = lab != 0
    ok = ((np.asarray(p_black) > 0.5) == (lab > 0)) & m
    return ok.sum(-1) / np.maximum(m.sum(-1), 1)
