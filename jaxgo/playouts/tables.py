"""Heavy playouts' gamma tables, for both backends: the Bradley-Terry gammas of ``jaxgo.features.moves``
rearranged for the playout loops (``jaxgo.playouts.xla.heavy``, ``jaxgo.playouts.native.heavy``), the shipped
ones, and made-up ones for development and tests.  Plain numpy: importing this module loads no XLA."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from jaxgo.features import moves as mf


class PolicyTables(NamedTuple):
    """The gammas rearranged for the playout loop (all float32 numpy arrays; a NamedTuple is a JAX pytree, so the
    XLA kernels take it as arrays, never as static arguments)."""

    pattern: np.ndarray  # [2**20]: gamma of the pattern group per raw 3x3 code (``moves.pattern_codes``)
    capture: np.ndarray  # [4]: gamma per level (level 0 = absent included), likewise below
    extension: np.ndarray  # [2]
    self_atari: np.ndarray  # [2]
    atari: np.ndarray  # [3]
    dist_prev: np.ndarray  # [Ld]
    dist_prev2: np.ndarray  # [Ld]
    line: np.ndarray  # [6]: gamma_line per level, times the pass group's level-0 gamma (a constant)


def _group_levels() -> dict[str, int]:
    return dict(zip(mf.GROUPS, (int(s) for s in mf.group_sizes())))


def policy_tables(log_gamma) -> PolicyTables:
    """Tables for ``run`` from log-gammas float [K] indexed like ``jaxgo.features.moves`` (group offset + level;
    K = ``moves.num_features()``)."""
    log_gamma = np.asarray(log_gamma, np.float64)
    if log_gamma.shape != (mf.num_features(),):
        raise ValueError(f"log-gammas must have shape ({mf.num_features()},), got {log_gamma.shape}")
    gamma = np.exp(log_gamma)
    sizes = _group_levels()
    offsets = dict(zip(mf.GROUPS, (int(o) for o in mf.group_offsets())))

    def group(name):
        return gamma[offsets[name]: offsets[name] + sizes[name]]

    pattern_ids = mf.canonical_pattern_table()[0]
    small = {name: np.asarray(group(name), np.float32)
             for name in ("capture", "extension", "self_atari", "atari", "dist_prev", "dist_prev2")}
    return PolicyTables(pattern=np.asarray(group("pattern")[1 + pattern_ids], np.float32),
                        line=np.asarray(group("line") * group("pass")[0], np.float32), **small)


def synthetic_log_gammas(seed: int = 0, sigma: float = 1.0) -> np.ndarray:
    """float32 [K]: made-up log-gammas for development and tests: log-normal pattern gammas, strong captures
    and escapes, weak self-ataris, a preference for moves near the previous one.  Absent levels stay at 0."""
    rng = np.random.default_rng(seed)
    sizes = _group_levels()
    offsets = dict(zip(mf.GROUPS, (int(o) for o in mf.group_offsets())))
    log_gamma = np.zeros(mf.num_features(), np.float64)
    log_gamma[offsets["pattern"] + 1: offsets["pattern"] + sizes["pattern"]] = rng.normal(
        0.0, sigma, sizes["pattern"] - 1)
    fixed = {"capture": [0, 2.5, 3.0, 3.5], "extension": [0, 2.0], "self_atari": [0, -2.0],
             "atari": [0, 0.7, 1.0],
             "line": [0, -0.8, 0.2, 0.4, 0.1, 0.0], "pass": [0, -3.0, -1.0]}
    for name, values in fixed.items():
        log_gamma[offsets[name]: offsets[name] + len(values)] = values
    for name, scale in (("dist_prev", 1.5), ("dist_prev2", 0.7)):
        levels = np.arange(sizes[name])
        ramp = scale * np.maximum(0.0, 1.0 - (levels - 1) / 6.0)
        ramp[0] = 0.0
        log_gamma[offsets[name]: offsets[name] + sizes[name]] = ramp
    return log_gamma.astype(np.float32)


def load_default_tables() -> PolicyTables:
    """The tables of the gammas shipped with the package (``jaxgo.features.gammas.load_default``)."""
    from jaxgo.features import gammas as shipped

    return policy_tables(_as_log_gamma(shipped.load_default()))


def _as_log_gamma(gammas) -> np.ndarray:
    """Accept the shipped gammas object in the shapes it may come in: an array of log-gammas, or an object or
    mapping with a ``log_gamma`` entry."""
    if isinstance(gammas, dict):
        gammas = gammas["log_gamma"]
    elif hasattr(gammas, "log_gamma"):
        gammas = gammas.log_gamma
    return np.asarray(gammas, np.float32)

