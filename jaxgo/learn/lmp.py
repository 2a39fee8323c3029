"""Laplace_q marginal propagation (Lew 2011, thesis ch. 4.7, Algorithm 1) extended to teams of features.

Every feature k has a Gamma-shaped marginal q_k(w) = w^alpha_k exp(-beta_k w) whose mode alpha_k / beta_k is the
gamma used for prediction.  The prior factor is (PRIOR_ALPHA, PRIOR_BETA) of ``jaxgo.learn.bt``.  A data point d
(a position) with candidate teams j of strength E_dj = prod of the team's modes and winner c_d has, for each
feature k it touches, the factor (derivation in docs/gammas.md)

    alpha_{k,d} = [k in team c_d],    beta_{k,d} = C_kd / S_d,
    C_kd = sum over candidates j holding k of E_dj / w_k  (team-mates' strength),  S_d = sum_j E_dj,

evaluated at the modes of q when d is visited.  Visiting d swaps its old factor for the new one: alpha_k gains
[k in c_d] on the first visit only; beta_k loses the stored old beta_{k,d} and gains the new one.  For teams of
one feature, C_kd = 1 and beta_{k,d} = delta_d = 1 / S_d for every alternative: the thesis' Algorithm 1.  At a
fixed point mode_k = (PRIOR_ALPHA + W_k) / (PRIOR_BETA + sum_d C_kd / S_d), the stationary equation of MAP with
the Gamma prior, i.e. the optimum of MM with ``prior="gamma"``.

Positions are processed in batches: the modes are read once per batch and the batch's factors are swapped
together (a batch of one position is the thesis' sequential algorithm).  With teams the old beta_{k,d} is no
longer one number per position, so the sum of a batch's factors is kept instead: float32 [K] per batch, written
per shard next to the checkpoint when several passes are asked for (nothing is kept for a single pass).  State in
memory: alpha, beta [K] plus one shard.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxgo.learn.bt import PRIOR_ALPHA, PRIOR_BETA, masked_log_strength

MIN_BETA = 1e-6


class LMPState(NamedTuple):
    alpha: jax.Array  # float32 [K]
    beta: jax.Array  # float32 [K]
    fixed: jax.Array  # bool [K]: gamma 1, never updated


def init(num_features: int, fixed=None) -> LMPState:
    """The prior: alpha = PRIOR_ALPHA, beta = PRIOR_BETA for every feature (modes 1)."""
    fixed = jnp.zeros(num_features, bool) if fixed is None else jnp.asarray(fixed, bool)
    return LMPState(jnp.full(num_features, PRIOR_ALPHA, jnp.float32),
                    jnp.full(num_features, PRIOR_BETA, jnp.float32), fixed)


def log_gamma(state: LMPState):
    """float32 [K]: log of the marginal modes alpha / beta (0 for fixed features)."""
    return jnp.where(state.fixed, 0.0, jnp.log(state.alpha) - jnp.log(state.beta))


def batch_factors(lg, features, mask):
    """float32 [K]: sum over the batch's positions d of beta_{k,d} = C_kd / S_d at log modes ``lg``.

    C_kd / S_d = (1 / w_k) sum_{j holds k} P_d(j): one exp per candidate (P), a ``segment_sum`` of P into the
    candidates' features, then one exp per feature (1 / w; log gammas clipped to +-80, far beyond real values).
    """
    log_e, log_total, row = masked_log_strength(lg, features, mask)
    keep = mask & row[:, None]
    prob = jnp.where(keep, jnp.exp(jnp.where(keep, log_e - log_total, -jnp.inf)), 0.0)  # [B, C]
    spread = jnp.broadcast_to(prob[..., None], features.shape)  # [B, C, G]
    sums = jax.ops.segment_sum(spread.reshape(-1), features.reshape(-1), num_segments=lg.shape[0])
    return sums * jnp.exp(-jnp.clip(lg, -80.0, 80.0))


def batch_update(state: LMPState, features, mask, winner, old_factors, first):
    """Visit one batch: features int32 [B, C, G], mask bool [B, C], winner int32 [B]; old_factors float32 [K]
    (this batch's factors from its previous visit, zeros on the first); first: bool [] (first visit: add the
    wins to alpha).  Padding rows (mask all False) count for nothing.  Returns (state, new factors [K])."""
    num = state.alpha.shape[0]
    new_factors = batch_factors(log_gamma(state), features, mask)
    row = jnp.any(mask, axis=1)
    won = jnp.take_along_axis(features, winner[:, None, None], axis=1)[:, 0, :]  # [B, G]
    wins = jax.ops.segment_sum(jnp.broadcast_to(row[:, None], won.shape).astype(jnp.float32).reshape(-1),
                               won.reshape(-1), num_segments=num)
    upd = ~state.fixed
    alpha = jnp.where(upd & first, state.alpha + wins, state.alpha)
    beta = jnp.where(upd, jnp.maximum(state.beta - old_factors + new_factors, MIN_BETA), state.beta)
    return LMPState(alpha, beta, state.fixed), new_factors


def _scan(state, features, mask, winner, old_factors, first):
    def step(st, xs):
        f, m, w, old = xs
        return batch_update(st, f, m, w, old, first)
    return jax.lax.scan(step, state, (features, mask, winner, old_factors))


run_batches = jax.jit(_scan)
run_batches.__doc__ = """``batch_update`` over stacked batches with ``lax.scan``: features int32 [nb, B, C, G], mask
[nb, B, C], winner [nb, B], old_factors [nb, K], first bool [] -> (state, factors [nb, K])."""


def fit(features, mask, winner, num_features: int, *, passes: int = 1, batch: int = 64, fixed=None,
        callback=None) -> LMPState:
    """In-memory LMP over dense arrays (features int32 [N, C, G], mask [N, C], winner [N]); positions are visited
    in order, ``batch`` at a time, ``passes`` times.  ``callback(pass, state)`` after each pass."""
    from jaxgo.learn.bt import fixed_mask

    features, mask, winner = jnp.asarray(features), jnp.asarray(mask), jnp.asarray(winner)
    n = features.shape[0]
    nb = -(-n // batch)
    pad = nb * batch - n
    features = jnp.pad(features, ((0, pad), (0, 0), (0, 0))).reshape((nb, batch) + features.shape[1:])
    mask = jnp.pad(mask, ((0, pad), (0, 0))).reshape(nb, batch, -1)
    winner = jnp.pad(winner, (0, pad)).reshape(nb, batch)
    state = init(num_features, fixed_mask(num_features, fixed))
    factors = jnp.zeros((nb, num_features), jnp.float32)
    for p in range(passes):
        state, factors = run_batches(state, features, mask, winner, factors, jnp.bool_(p == 0))
        if callback is not None:
            callback(p, state)
    return state
