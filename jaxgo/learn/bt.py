"""Generalised Bradley-Terry move model with feature teams, fitted by minorisation-maximisation (MM).

Model (Coulom 2007, after Hunter 2004): in position i every candidate move j is a *team* of features, one level
per group; its strength is E_ij = prod_g gamma[F[i, j, g]] and the played move w_i wins with probability
E_iw / sum_j E_ij.  MM updates one group g at a time, which is exact because two features of one group never
sit in the same team:

    gamma_k <- (W_k + a) / ( sum_i C_ik / E_i + b / (gamma_k + 1) )

with W_k the number of wins of teams holding k, E_i = sum_j E_ij, C_ik = sum over candidates j of i that hold
k of E_ij / gamma_k (the strength of k's team-mates), and Coulom's prior: a = 1 virtual win and b = 2
virtual games against a player of gamma 1 (``prior=False`` drops it).  Feature indices listed in ``fixed`` (the
absent level of every group) stay at gamma 1.

Data layout: F int32 [N, C, G] global feature indices, mask bool [N, C] (real candidates), winner int32 [N].
Everything is one jitted array program; a group update is a gather, a product and a ``segment_sum``.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np


class MMState(NamedTuple):
    log_gamma: jax.Array  # float32 [K]
    iteration: jax.Array  # int32 []


def init(num_features: int) -> MMState:
    """All gammas 1."""
    return MMState(jnp.zeros(num_features, jnp.float32), jnp.int32(0))


def team_log_strength(log_gamma, features):
    """float32 [N, C]: log E_ij = sum_g log gamma[F[i, j, g]] for features int32 [N, C, G]."""
    return jnp.sum(log_gamma[features], axis=-1)


def win_counts(features, winner, num_features: int):
    """float32 [K]: W_k, how many winning teams hold feature k."""
    won = jnp.take_along_axis(features, winner[:, None, None], axis=1)[:, 0, :]  # [N, G]
    return jax.ops.segment_sum(jnp.ones(won.size, jnp.float32), won.reshape(-1), num_segments=num_features)


def log_likelihood(log_gamma, features, mask, winner):
    """float32 []: mean over positions of log P(winner) (the model's log-likelihood per move)."""
    log_e = jnp.where(mask, team_log_strength(log_gamma, features), -jnp.inf)
    won = jnp.take_along_axis(log_e, winner[:, None], axis=1)[:, 0]
    return jnp.mean(won - jax.nn.logsumexp(log_e, axis=1))


@functools.partial(jax.jit, static_argnames=("group", "prior"))
def update_group(state: MMState, features, mask, wins, fixed, *, group: int, prior: bool = True) -> MMState:
    """One MM step for the features of group ``group`` (static int).

    features int32 [N, C, G]; mask bool [N, C]; wins float32 [K] (``win_counts``); fixed bool [K].
    """
    log_gamma = state.log_gamma
    num = log_gamma.shape[0]
    log_e = jnp.where(mask, team_log_strength(log_gamma, features), -jnp.inf)  # [N, C]
    log_total = jax.nn.logsumexp(log_e, axis=1, keepdims=True)  # [N, 1]
    own = features[:, :, group]  # [N, C]
    # C_ik / E_i summed over i: team-mates' strength E_ij / gamma_k over E_i.
    weight = jnp.where(mask, jnp.exp(log_e - log_gamma[own] - log_total), 0.0)
    denom = jax.ops.segment_sum(weight.reshape(-1), own.reshape(-1), num_segments=num)
    gamma = jnp.exp(log_gamma)
    a, b = (1.0, 2.0) if prior else (0.0, 0.0)
    new = (wins + a) / (denom + b / (gamma + 1.0))
    in_group = jax.ops.segment_sum(jnp.ones(own.size, jnp.float32), own.reshape(-1), num_segments=num) > 0
    update = in_group & ~fixed & (new > 0) & jnp.isfinite(new)
    return MMState(jnp.where(update, jnp.log(jnp.where(update, new, 1.0)), log_gamma), state.iteration)


def fit(features, mask, winner, num_features: int, *, iterations: int = 20, fixed=None, prior: bool = True,
        callback=None) -> MMState:
    """Run ``iterations`` sweeps of MM (each sweep updates every group once).

    features int32 [N, C, G], mask bool [N, C], winner int32 [N]; fixed: bool [K] or index list (gamma 1).
    ``callback(sweep, state)`` is called after each sweep (e.g. to print the log-likelihood).
    """
    features = jnp.asarray(features)
    mask = jnp.asarray(mask)
    winner = jnp.asarray(winner)
    fixed_mask = np.zeros(num_features, bool)
    if fixed is not None:
        fixed_mask[np.asarray(fixed)] = True
    fixed_mask = jnp.asarray(fixed_mask)
    wins = win_counts(features, winner, num_features)
    state = init(num_features)
    for sweep in range(iterations):
        for group in range(features.shape[-1]):
            state = update_group(state, features, mask, wins, fixed_mask, group=group, prior=prior)
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
