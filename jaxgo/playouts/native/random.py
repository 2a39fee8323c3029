"""The native playouts' random numbers: xorshift64* streams, one per playout, seeded from (seed, job) by
splitmix64, so a batch's results depend on its seed and not on how its playouts are spread over threads."""

from __future__ import annotations

import numba
import numpy as np

jit = numba.njit(nogil=True, cache=True)

_MULT = np.uint64(0x2545F4914F6CDD1D)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@jit
def splitmix(x):
    """uint64 -> uint64: a well-mixed function of x (splitmix64's finaliser after one step)."""
    z = x + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@jit
def stream_seed(seed, job):
    """uint64: the non-zero start state of playout ``job``'s stream under ``seed``."""
    z = splitmix(np.uint64(seed) ^ splitmix(np.uint64(job)))
    return z if z != np.uint64(0) else _GOLDEN


@jit
def next_u64(x):
    """(new state, 64 random bits): one xorshift64* step."""
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    return x, x * _MULT


@jit
def uniform_below(bits, m):
    """int in [0, m) from 64 random bits (the high 32 bits scaled; m < 2**31)."""
    return np.int64(((bits >> np.uint64(32)) * np.uint64(m)) >> np.uint64(32))


@jit
def uniform_float(bits):
    """float64 in [0, 1) from 64 random bits (the high 53)."""
    return np.float64(bits >> np.uint64(11)) * (1.0 / 9007199254740992.0)
