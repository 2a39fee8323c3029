"""Jitted rule kernels, built once per rule setting and shared by every caller.

``kernels(suicide)`` returns one ``RuleKernels`` per suicide setting; each kernel is one ``jax.jit`` object,
so it compiles once per board size (and batch shape) for the whole process, whichever module calls it.
Shapes for an N x N board with P = N * N points and A = P + 1 actions (pass last).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Callable

import jax

from jaxgo.go import rules


@dataclasses.dataclass(frozen=True)
class RuleKernels:
    """Jitted functions of ``jaxgo.go.rules`` for one suicide setting."""

    play: Callable  # (state, move int32 []) -> state
    legal: Callable  # state -> bool [A]: legal moves (simple ko)
    next_hashes: Callable  # (state, moves int32 [M]) -> uint32 [M, 2]: hash after each move
    score: Callable  # (state, komi float32 []) -> float32 []: area score, black - white - komi
    ownership: Callable  # state -> int8 [P]: area owner per point
    searchable: Callable  # state -> bool [A]: ``rules.searchable_mask`` of one state
    searchable_batch: Callable  # states [S] -> bool [S, A]
    children: Callable  # (state, moves int32 [M]) -> states [M]: one state, each of the moves played
    children_batch: Callable  # (states [S], moves int32 [S]) -> (states [S], bool [S, A] searchable)


@functools.lru_cache(maxsize=None)
def kernels(suicide: bool) -> RuleKernels:
    """The jitted rule kernels for ``suicide`` (built on the first call, then cached)."""

    def searchable(state):
        return rules.searchable_mask(state, suicide)

    def child(state, move):
        return rules.play(state, move, suicide=suicide)

    def child_and_searchable(state, move):
        nxt = child(state, move)
        return nxt, searchable(nxt)

    return RuleKernels(
        play=jax.jit(functools.partial(rules.play, suicide=suicide)),
        legal=jax.jit(functools.partial(rules.legal_mask, suicide=suicide)),
        next_hashes=jax.jit(jax.vmap(lambda s, m: rules.play(s, m, suicide=suicide).hash, in_axes=(None, 0))),
        score=jax.jit(rules.area_score),
        ownership=jax.jit(rules.ownership),
        searchable=jax.jit(searchable),
        searchable_batch=jax.jit(jax.vmap(searchable)),
        children=jax.jit(jax.vmap(child, in_axes=(None, 0))),
        children_batch=jax.jit(jax.vmap(child_and_searchable)),
    )


__all__ = ["RuleKernels", "kernels"]
