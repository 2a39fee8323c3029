"""Nested pattern templates T0..T7 around a move point and their symmetry-invariant hash keys.

Templates (our reading of the paper's Figure 5, sizes growing from the point itself): T_i is the set of
offsets (dr, dc) with dr^2 + dc^2 <= R_i, R = (0, 1, 2, 4, 5, 8, 10, 13): 1, 5, 9, 13, 21, 25, 37, 45 points.
Each is a union of whole D4 orbits, so the templates are closed under the 8 symmetries of the square.

Vertex states: 0 empty, 1 attacker stone, 2 defender stone, 3 off-board, 4 goal-string stone (defender stones
of the goal string; other defender stones are 2).  Patterns are taken on the position *before* the move, so
the centre is empty; the side making the move (attacker or defender) is part of the key.

Keys: Zobrist over (offset rank, state) — the offsets are ordered by (R, angle) so that T_i is a prefix of
the list.  For each of the 8 symmetries s, key_s(T_i) = XOR over the first |T_i| offsets o of
Z[o, state(p + s(o))]; the pattern key is min_s key_s (a symmetry of the board permutes the 8 values, so the
minimum is invariant), XORed with a salt per (template size, mover).  Keys are computed for all moves of a
node in one numpy call (``stack_keys``): [M, 8] uint64.  Colour reversal is *not* a symmetry: swapping
attacker and defender stones changes the states.
"""

from __future__ import annotations

import functools
import math

import numpy as np

RADII2 = (0, 1, 2, 4, 5, 8, 10, 13)
N_TEMPLATES = len(RADII2)
PAD = 3
EMPTY_S, ATTACKER_S, DEFENDER_S, OFF_S, GOAL_S = 0, 1, 2, 3, 4


def _offsets():
    offs = [(dr, dc) for dr in range(-PAD, PAD + 1) for dc in range(-PAD, PAD + 1) if dr * dr + dc * dc <= RADII2[-1]]
    offs.sort(key=lambda o: (o[0] ** 2 + o[1] ** 2, math.atan2(o[0], o[1])))
    return offs


OFFSETS = _offsets()
TEMPLATE_SIZES = tuple(sum(1 for dr, dc in OFFSETS if dr * dr + dc * dc <= r) for r in RADII2)

SYMMETRIES = (
    lambda r, c: (r, c), lambda r, c: (-r, c), lambda r, c: (r, -c), lambda r, c: (-r, -c),
    lambda r, c: (c, r), lambda r, c: (-c, r), lambda r, c: (c, -r), lambda r, c: (-c, -r),
)

_rng = np.random.default_rng(20070620)
ZOBRIST = _rng.integers(1, 2 ** 63, size=(len(OFFSETS), 5), dtype=np.int64).astype(np.uint64)
SALT = _rng.integers(1, 2 ** 63, size=(2, N_TEMPLATES), dtype=np.int64).astype(np.uint64)
PASS_KEYS = _rng.integers(1, 2 ** 63, size=(2, N_TEMPLATES), dtype=np.int64).astype(np.uint64)


def template(i: int) -> list[tuple[int, int]]:
    """Offsets (dr, dc) of template T_i."""
    return OFFSETS[: TEMPLATE_SIZES[i]]


@functools.lru_cache(maxsize=None)
def _deltas(size: int) -> np.ndarray:
    """[8, n_offsets] flat-index deltas in the padded board of ``size`` for each symmetry."""
    w = size + 2 * PAD
    return np.array([[a * w + b for a, b in (s(dr, dc) for dr, dc in OFFSETS)] for s in SYMMETRIES], dtype=np.int64)


def vertex_states(stones, size: int, attacker: int, goal_points) -> np.ndarray:
    """Padded [(size+6)^2] int array of vertex states (see module doc)."""
    w = size + 2 * PAD
    st = np.asarray(stones, dtype=np.int64).reshape(size, size)
    inner = np.where(st == attacker, ATTACKER_S, np.where(st == -attacker, DEFENDER_S, EMPTY_S))
    out = np.full((w, w), OFF_S, dtype=np.int64)
    out[PAD:PAD + size, PAD:PAD + size] = inner
    flat = out.reshape(-1)
    for p in goal_points:
        r, c = divmod(p, size)
        flat[(r + PAD) * w + c + PAD] = GOAL_S
    return flat


def stack_keys(states: np.ndarray, size: int, moves, mover_is_attacker: bool) -> np.ndarray:
    """uint64 [M, 8] pattern keys (T0..T7) for ``moves`` (flat points; the pass point size**2 allowed)."""
    moves = np.asarray(list(moves), dtype=np.int64)
    side = 0 if mover_is_attacker else 1
    out = np.empty((len(moves), N_TEMPLATES), dtype=np.uint64)
    is_pass = moves >= size * size
    if is_pass.any():
        out[is_pass] = PASS_KEYS[side]
    real = moves[~is_pass]
    if len(real):
        w = size + 2 * PAD
        r, c = np.divmod(real, size)
        centre = (r + PAD) * w + c + PAD
        idx = centre[:, None, None] + _deltas(size)[None]                 # [M, 8, n_off]
        s = states[idx]                                                    # [M, 8, n_off]
        z = ZOBRIST[np.arange(len(OFFSETS))[None, None, :], s]            # [M, 8, n_off]
        acc = np.bitwise_xor.accumulate(z, axis=2)
        ends = np.array(TEMPLATE_SIZES) - 1
        keys = acc[:, :, ends].min(axis=1)                                 # [M, 8]
        out[~is_pass] = keys ^ SALT[side][None, :]
    return out


def board_stack_keys(board, moves, attacker: int, goal: int) -> np.ndarray:
    """Keys [M, 8] for ``moves`` on a ``jaxgo.go.hostboard.Board`` (mover = side to move), goal string at ``goal``."""
    goal_pts = board.chain(goal)[0] if board.stones[goal] != 0 else ()
    states = vertex_states(board.stones, board.size, attacker, goal_pts)
    return stack_keys(states, board.size, moves, board.to_play == attacker)
