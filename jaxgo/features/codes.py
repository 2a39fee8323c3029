"""Compact per-candidate codes: one uint32 per candidate holding what cannot be recomputed cheaply.

``pack`` turns the levels of ``jaxgo.features.move_features`` (int32 [..., P+1, G]) into uint32 [..., P+1]:

    bits  0..17  pattern level (1 + canonical 3x3 id; 0 for pass / illegal)
    bits 18..19  capture level      bit 20  extension      bit 21  self-atari
    bits 22..23  atari level        bit 24  legal

``decode`` rebuilds the full levels from the codes plus the two previous moves: the distance levels, the line
and the pass level depend only on the candidate's point and the previous moves.  Shards store codes, so a
position costs 4 * (P + 1) bytes plus a few int16 (``jaxgo.learn.shards``).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxgo.features.moves import GROUPS, MAX_DISTANCE, SAME_POINT_LEVEL, distance, group_offsets, num_features
from jaxgo.go import rules

PATTERN_BITS = 18
_FIELDS = (("capture", 18, 2), ("extension", 20, 1), ("self_atari", 21, 1), ("atari", 22, 2))
LEGAL_BIT = 24
_G = {g: i for i, g in enumerate(GROUPS)}


def pack(levels, legal):
    """levels int [..., P+1, G], legal bool [..., P+1] -> uint32 [..., P+1] (numpy or jax arrays)."""
    xp = jnp if isinstance(levels, jnp.ndarray) and not isinstance(levels, np.ndarray) else np
    lv = levels.astype(xp.uint32)
    code = lv[..., _G["pattern"]]
    for name, shift, _ in _FIELDS:
        code = code | (lv[..., _G[name]] << shift)
    return code | (legal.astype(xp.uint32) << LEGAL_BIT)


def decode_levels(codes, prev, prev2):
    """Levels int32 [..., P+1, G] (``GROUPS`` order) and legal bool [..., P+1] from codes uint32 [..., P+1] and
    the previous moves prev, prev2 int [...] (P = pass, -1 = none).  Jittable; equals ``move_features``."""
    codes = jnp.asarray(codes).astype(jnp.uint32)
    num = codes.shape[-1]
    points = num - 1
    size = rules.board_size(points)
    idx = jnp.arange(points)
    prev = jnp.asarray(prev, jnp.int32)[..., None]
    prev2 = jnp.asarray(prev2, jnp.int32)[..., None]

    def field(shift, width):
        return ((codes >> shift) & ((1 << width) - 1)).astype(jnp.int32)

    def dist_level(p):
        d = jnp.minimum(distance(idx, jnp.clip(p, 0, points - 1), size), MAX_DISTANCE)
        level = jnp.where(d == 0, SAME_POINT_LEVEL, d - 1)
        level = jnp.where((p >= 0) & (p < points), level, 0)
        return jnp.concatenate([level, jnp.zeros(level.shape[:-1] + (1,), jnp.int32)], -1)

    row, col = idx // size, idx % size
    line = jnp.minimum(jnp.minimum(jnp.minimum(row, col), jnp.minimum(size - 1 - row, size - 1 - col)) + 1, 5)
    line = jnp.broadcast_to(jnp.concatenate([line, jnp.zeros(1, line.dtype)]), codes.shape)
    is_pass = jnp.arange(num) == points
    pass_level = jnp.where(is_pass, jnp.where(prev == points, 2, 1), 0)
    parts = {"pattern": field(0, PATTERN_BITS), "dist_prev": dist_level(prev), "dist_prev2": dist_level(prev2),
             "line": line.astype(jnp.int32), "pass": jnp.broadcast_to(pass_level, codes.shape)}
    for name, shift, width in _FIELDS:
        parts[name] = field(shift, width)
    legal = field(LEGAL_BIT, 1) == 1
    levels = jnp.stack([jnp.broadcast_to(parts[g], codes.shape) for g in GROUPS], -1)
    return jnp.where(legal[..., None], levels, 0), legal


def decode(codes, prev, prev2):
    """Global feature indices int32 [..., P+1, G] (group offsets added) and legal bool [..., P+1].

    Codes uint32 [..., P+1, 2] (base code, large-pattern level; ``jaxgo.features.large``) give one more column,
    the ``"large"`` group, whose level 0 ("no frequent large pattern") sits at index ``num_features()``."""
    codes = jnp.asarray(codes)
    with_large = codes.shape[-1] == 2
    levels, legal = decode_levels(codes[..., 0] if with_large else codes, prev, prev2)
    features = levels + jnp.asarray(group_offsets())
    if with_large:
        big = jnp.where(legal, codes[..., 1].astype(jnp.int32), 0) + num_features()
        features = jnp.concatenate([features, big[..., None]], -1)
    return features, legal
