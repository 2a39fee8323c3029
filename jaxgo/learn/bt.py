"""Generalised Bradley-Terry move model with feature teams, fitted by minorisation-maximisation (MM).

Model (Coulom 2007, after Hunter 2004): in position i every candidate move j is a *team* of features, one level
per group; its strength is E_ij = prod_g gamma[F[i, j, g]] and the played move w_i wins with probability
E_iw / sum_j E_ij.  MM updates one group g at a time, which is exact because two features of one group never
sit in the same team:

    gamma_k <- (W_k + a) / ( sum_i C_ik / E_i + prior denominator )

with W_k the number of wins of teams holding k, E_i = sum_j E_ij, C_ik = sum over candidates j of i that hold
k of E_ij / gamma_k (the strength of k's team-mates).  Priors (``prior``):

- ``"coulom"`` (or True): one virtual win and one virtual loss against a player of gamma 1, i.e. a = 1 and
  denominator term 2 / (gamma_k + 1) (Coulom 2007);
- ``"gamma"``: a Gamma(shape 1 + PRIOR_ALPHA, rate PRIOR_BETA) density, i.e. a = PRIOR_ALPHA and denominator term
  PRIOR_BETA (the prior that ``jaxgo.learn.lmp`` uses, so both reach the same MAP point);
- None (or False): maximum likelihood.

Feature indices listed in ``fixed`` (the absent level of every group) stay at gamma 1.  Everything is computed
in log space (log-sum-exp per position), so no strength overflows float32.

Data layout: F int32 [N, C, G] global feature indices, mask bool [N, C] (real candidates), winner int32 [N].
Rows whose mask is all False are padding and ignored.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

PRIOR_ALPHA = 1.0
PRIOR_BETA = 1.0


class MMState(NamedTuple):
    log_gamma: jax.Array  # float32 [K]
    iteration: jax.Array  # int32 []


def init(num_features: int) -> MMState:
    """All gammas 1."""
    return MMState(jnp.zeros(num_features, jnp.float32), jnp.int32(0))


def _prior_name(prior) -> str | None:
    if prior is True:
        return "coulom"
    if prior is False or prior is None:
        return None
    if prior not in ("coulom", "gamma"):
        raise ValueError(f"unknown prior {prior!r} (coulom, gamma or None)")
    return prior


def team_log_strength(log_gamma, features):
    """float32 [N, C]: log E_ij = sum_g log gamma[F[i, j, g]] for features int32 [N, C, G]."""
    return jnp.sum(log_gamma[features], axis=-1)


def masked_log_strength(log_gamma, features, mask):
    """(log E int32 [N, C] with -inf off the mask, log total [N, 1], row bool [N]): log total is 0 on padding
    rows (no candidate), so nothing downstream divides by zero."""
    log_e = jnp.where(mask, team_log_strength(log_gamma, features), -jnp.inf)
    row = jnp.any(mask, axis=1)
    safe = jnp.where(row[:, None], log_e, 0.0)
    log_total = jnp.where(row[:, None], jax.nn.logsumexp(safe, axis=1, keepdims=True,
                                                          where=mask | ~row[:, None]), 0.0)
    return log_e, log_total, row


def win_counts(features, winner, num_features: int, row=None):
    """float32 [K]: W_k, how many winning teams hold feature k (rows where ``row`` is False not counted)."""
    won = jnp.take_along_axis(features, winner[:, None, None], axis=1)[:, 0, :]  # [N, G]
    weight = jnp.ones(won.shape, jnp.float32)
    if row is not None:
        weight = weight * row[:, None]
    return jax.ops.segment_sum(weight.reshape(-1), won.reshape(-1), num_segments=num_features)


def position_log_likelihood(log_gamma, features, mask, winner):
    """float32 [N]: log P(winner) per position (0 on padding rows)."""
    log_e, log_total, row = masked_log_strength(log_gamma, features, mask)
    won = jnp.take_along_axis(log_e, winner[:, None], axis=1)[:, 0]
    return jnp.where(row, won - log_total[:, 0], 0.0)


@jax.jit
def log_likelihood(log_gamma, features, mask, winner):
    """float32 []: mean over positions of log P(winner) (the model's log-likelihood per move)."""
    row = jnp.any(mask, axis=1)
    return jnp.sum(position_log_likelihood(log_gamma, features, mask, winner)) / jnp.maximum(jnp.sum(row), 1)


def group_denominator(log_gamma, features, mask, group):
    """float32 [K]: sum_i C_ik / E_i for the features k of group ``group`` (an int or int32 [] array; zero
    elsewhere)."""
    log_e, log_total, _ = masked_log_strength(log_gamma, features, mask)
    own = jnp.take(features, group, axis=2)
    weight = jnp.where(mask, jnp.exp(jnp.where(mask, log_e - log_gamma[own] - log_total, 0.0)), 0.0)
    return jax.ops.segment_sum(weight.reshape(-1), own.reshape(-1), num_segments=log_gamma.shape[0])


def mm_step(log_gamma, wins, denom, update, prior):
    """The MM update of the features where ``update`` (bool [K]) holds; the others keep their value."""
    prior = _prior_name(prior)
    gamma = jnp.exp(log_gamma)
    if prior == "coulom":
        new = (wins + 1.0) / (denom + 2.0 / (gamma + 1.0))
    elif prior == "gamma":
        new = (wins + PRIOR_ALPHA) / (denom + PRIOR_BETA)
    else:
        new = wins / denom
    ok = update & (new > 0) & jnp.isfinite(new)
    return jnp.where(ok, jnp.log(jnp.where(ok, new, 1.0)), log_gamma)


@functools.partial(jax.jit, static_argnames=("prior",))
def update_group(state: MMState, features, mask, wins, fixed, *, group, prior="coulom") -> MMState:
    """One MM step for the features of group ``group`` (int, traced: one compilation serves every group).

    features int32 [N, C, G]; mask bool [N, C]; wins float32 [K] (``win_counts``); fixed bool [K].
    """
    num = state.log_gamma.shape[0]
    denom = group_denominator(state.log_gamma, features, mask, group)
    own = features[:, :, group]
    in_group = jax.ops.segment_sum(mask.reshape(-1).astype(jnp.float32), own.reshape(-1), num_segments=num) > 0
    return MMState(mm_step(state.log_gamma, wins, denom, in_group & ~fixed, prior), state.iteration)


def fixed_mask(num_features: int, fixed) -> np.ndarray:
    """bool [K] from an index list (or a bool mask, or None)."""
    out = np.zeros(num_features, bool)
    if fixed is not None:
        fixed = np.asarray(fixed)
        if fixed.dtype == bool:
            return fixed.copy()
        out[fixed] = True
    return out


def fit(features, mask, winner, num_features: int, *, iterations: int = 20, fixed=None, prior="coulom",
        callback=None, state: MMState | None = None) -> MMState:
    """Run ``iterations`` sweeps of MM (each sweep updates every group once), in memory.

    features int32 [N, C, G], mask bool [N, C], winner int32 [N]; fixed: bool [K] or index list (gamma 1).
    ``callback(sweep, state)`` is called after each sweep (e.g. to print the log-likelihood).
    """
    features = jnp.asarray(features)
    mask = jnp.asarray(mask)
    winner = jnp.asarray(winner)
    fixed = jnp.asarray(fixed_mask(num_features, fixed))
    wins = win_counts(features, winner, num_features, jnp.any(mask, axis=1))
    state = init(num_features) if state is None else state
    prior = _prior_name(prior)
    for sweep in range(iterations):
        for group in range(features.shape[-1]):
            state = update_group(state, features, mask, wins, fixed, group=group, prior=prior)
        state = MMState(state.log_gamma, state.iteration + 1)
        if callback is not None:
            callback(sweep, state)
    return state


def predict_rank(log_gamma, features, mask, winner):
    """int32 [N]: rank of the played move among the candidates (0 = the model's top choice; ties count
    against the model: rank = number of candidates with strength >= the winner's, minus one)."""
    log_e = jnp.where(mask, team_log_strength(log_gamma, features), -jnp.inf)
    won = jnp.take_along_axis(log_e, winner[:, None], axis=1)
    return jnp.sum(log_e >= won, axis=1) - 1
