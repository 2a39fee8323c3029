"""The Gibbs move model of the paper (eq. 5): P(move | c) ∝ exp(beta * u(c_move)), with u the expected
score E[sum_i s_i] of the position after the move, from the mover's point of view, under the territory CRF
(loopy BP marginals).  Candidate moves: every legal board point (passes are left out)."""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.crf.bp import loopy_bp
from jaxgo.crf.models import MODELS
from jaxgo.go import rules


@jax.jit
def _children(state, moves):
    return jax.vmap(lambda m: rules.play(state, m).stones)(moves)


@partial(jax.jit, static_argnames=("model", "n"))
def _scores(params, boards, model: str, n: int):
    p = loopy_bp(MODELS[model].log_potentials(params, boards, n), n)
    return (2 * p - 1).sum(-1)


def move_values(state, params, model: str, batch: int = 128):
    """-> (legal moves int [M], mover's expected score after each move float [M])."""
    n = int(round(state.stones.shape[0] ** 0.5))
    legal = np.nonzero(np.asarray(rules.legal_mask(state))[:-1])[0].astype(np.int32)
    if len(legal) == 0:
        return legal, np.zeros(0, np.float32)
    pad = -len(legal) % batch
    moves = np.concatenate([legal, np.full(pad, legal[0], np.int32)])
    boards = np.asarray(_children(state, jnp.asarray(moves))).astype(np.int32)
    u = np.concatenate([np.asarray(_scores(jnp.asarray(params), jnp.asarray(boards[i:i + batch]), model, n))
                        for i in range(0, len(moves), batch)])[:len(legal)]
    return legal, (u * int(state.to_play)).astype(np.float32)


def log_likelihood(values, chosen, beta: float) -> float:
    """log P(chosen | model) = beta u_chosen - logsumexp(beta u) over the candidate moves."""
    z = beta * np.asarray(values, np.float64)
    m = z.max()
    return float(z[chosen] - m - np.log(np.exp(z - m).sum()))


def fit_beta(examples, grid=None) -> float:
    """Inverse temperature maximising the summed log-likelihood of (values, chosen index) examples."""
    grid = np.exp(np.linspace(np.log(1e-3), np.log(20.0), 80)) if grid is None else grid
    lls = [sum(log_likelihood(v, c, b) for v, c in examples) for b in grid]
    return float(grid[int(np.argmax(lls))])
