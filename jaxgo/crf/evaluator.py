"""Territory evaluator for other parts of jaxgo (server, GTP): expected territory from the CRF.

`expected_territory(stones [B, N, N] int8, to_play [B]) -> float32 [B, N, N]` in [-1, 1] (+1 = Black),
E[s_i | c] = 2 P(s_i = Black) - 1 under the shipped default model (loopy BP, I=50, eps=0.5).
Row 0 is the top row.  The paper's models do not depend on the side to play; `to_play` is accepted
(and shape-checked) so callers need not special-case, and is unused.  One jitted program per
(board size, padded batch size); batches are padded to a power of two to bound recompilation.
"""
from __future__ import annotations

import json
import os
from functools import lru_cache, partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.crf.bp import loopy_bp
from jaxgo.crf.models import MODELS

DEFAULT_MODELS = {"b5": "default_b5.json", "blib": "default_blib.json"}


@lru_cache(maxsize=None)
def load_model(path_or_name: str = "b5"):
    """-> (model name, params float32 array).  A name ('b5', 'blib') loads the file shipped in the package."""
    path = path_or_name
    if path_or_name in DEFAULT_MODELS:
        path = os.path.join(os.path.dirname(__file__), DEFAULT_MODELS[path_or_name])
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    name = d["model"]
    if name not in MODELS:
        raise ValueError(f"unknown CRF model {name!r} in {path}")
    params = np.asarray(d["params"], np.float32)
    if params.shape != (MODELS[name].num_params,):
        raise ValueError(f"{path}: {name} needs {MODELS[name].num_params} parameters, got {params.shape}")
    return name, params


def save_model(path: str, name: str, params, **extra) -> None:
    d = {"model": name, "names": list(MODELS[name].names), "params": [float(x) for x in np.asarray(params)]}
    d.update(extra)
    from jaxgo.util.files import write_json_atomic

    write_json_atomic(path, d)  # a failed write (full disk) leaves the old model whole


@partial(jax.jit, static_argnames=("model", "n", "iterations"))
def _bp_black(params, stones, model: str, n: int, iterations: int):
    """stones [B, P] -> P(s = Black) [B, P]."""
    return loopy_bp(MODELS[model].log_potentials(params, stones, n), n, iterations)


def _check(stones, to_play):
    stones = np.asarray(stones)
    if stones.ndim != 3 or stones.shape[1] != stones.shape[2]:
        raise ValueError(f"stones must be [B, N, N], got shape {stones.shape}")
    n = stones.shape[1]
    if not 2 <= n <= 19:
        raise ValueError(f"board size must be 2..19, got {n}")
    if not np.isin(stones, (-1, 0, 1)).all():
        raise ValueError("stones must be +1 (Black), -1 (White) or 0 (empty)")
    to_play = np.asarray(to_play)
    if to_play.shape != (stones.shape[0],):
        raise ValueError(f"to_play must be [B] = [{stones.shape[0]}], got shape {to_play.shape}")
    return stones.astype(np.int32), n


def _pad(x, b):
    size = 1 << max(0, int(np.ceil(np.log2(max(b, 1)))))
    return np.concatenate([x, np.zeros((size - b,) + x.shape[1:], x.dtype)]) if size > b else x


def black_probability(stones, to_play, model: str = "b5", iterations: int = 50) -> np.ndarray:
    """P(final owner = Black) float32 [B, N, N] by loopy BP."""
    stones, n = _check(stones, to_play)
    name, params = load_model(model)
    b = stones.shape[0]
    if b == 0:
        return np.zeros((0, n, n), np.float32)
    flat = _pad(stones.reshape(b, n * n), b)
    p = _bp_black(jnp.asarray(params), jnp.asarray(flat), name, n, iterations)
    return np.asarray(p, np.float32)[:b].reshape(b, n, n)


def expected_territory(stones, to_play, model: str = "b5", iterations: int = 50) -> np.ndarray:
    """E[s | c] float32 [B, N, N] in [-1, 1] (+1 = Black territory), row 0 = top."""
    return (2.0 * black_probability(stones, to_play, model, iterations) - 1.0).astype(np.float32)
