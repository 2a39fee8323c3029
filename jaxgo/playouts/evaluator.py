"""The Evaluator: how a search values its leaves (mctx's injected ``RecurrentFn``, here a playout policy).

``make_evaluator(policy, gammas)`` builds one of three evaluators, chosen once from a ``SearchConfig``:

    light   uniform playouts (``jaxgo.playouts.light``), no own-eye fills;
    heavy   gamma-proportional playouts (``jaxgo.playouts.heavy``) under the given or shipped gammas;
    rules   MoGo-style capture / save / shape tiers (``jaxgo.playouts.rule_policy``) on the heavy lane loop.

All three have one interface::

    evaluator.evaluate(states, key, playouts_per_state, komi, last_moves=None) -> PlayoutBatch

and its two halves ``dispatch`` (start the device call, return at once) and ``PendingBatch.collect`` (wait and
copy to the host), so a server can overlap its tree work with the device.  The device runs with komi 0 and
komi is applied on the host, so one call can hold positions of different komi (``komi`` scalar or [S]).
The tree search (``jaxgo.search.mcts.Searcher``), the analysis server and the ownership estimates of the
player all evaluate through this interface.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import numpy as np

from jaxgo.features import gammas as gamma_files
from jaxgo.features import moves as move_features
from jaxgo.playouts import heavy, light, rule_policy

POLICIES = ("light", "heavy", "rules")


@dataclasses.dataclass(frozen=True)
class PlayoutBatch:
    """Results of L playouts from each of S positions (host numpy arrays)."""

    winner: np.ndarray  # int8 [S, L]: +1 Black won, -1 White won, 0 draw (after komi)
    score: np.ndarray  # float32 [S, L]: Black area - White area - komi at the end
    ownership: np.ndarray  # int8 [S, L, P]: area owner of every point at the end
    first_colour: np.ndarray  # int8 [S, L, P]: colour that first played each point (0: none), for AMAF/RAVE

    @property
    def playouts(self) -> int:
        return int(np.prod(self.winner.shape))


@dataclasses.dataclass
class PendingBatch:
    """A dispatched evaluation: ``collect()`` waits for the device and returns the ``PlayoutBatch``."""

    result: object  # the device-side PlayoutResult [S * L] (padding rows included)
    count: int  # S: the active positions
    playouts_per_state: int  # L
    komi: np.ndarray  # float32 [S]

    def ready(self) -> None:
        """Block until the device call has finished (for timing)."""
        jax.block_until_ready(self.result.score)

    def collect(self) -> PlayoutBatch:
        s, l = self.count, self.playouts_per_state
        rows = s * l
        score = np.asarray(self.result.score[:rows], np.float32).reshape(s, l) - self.komi[:, None]
        return PlayoutBatch(winner=np.sign(score).astype(np.int8), score=score,
                            ownership=np.asarray(self.result.ownership[:rows]).reshape(s, l, -1),
                            first_colour=np.asarray(self.result.first_colour[:rows]).reshape(s, l, -1))


@dataclasses.dataclass(frozen=True)
class Evaluator:
    """Playouts of one policy.  ``tables``: the heavy / rule policy's tables (None for light)."""

    policy: str
    tables: object = None

    @property
    def needs_last_moves(self) -> bool:
        """Whether the policy's first move depends on the positions' last two moves (distance features)."""
        return self.policy != "light"

    def dispatch(self, states, key, playouts_per_state: int, komi=0.0, last_moves=None,
                 active: int | None = None) -> PendingBatch:
        """Start L = ``playouts_per_state`` playouts from each of the first ``active`` (default all S) of the
        batched ``states`` (``rules.State`` [S, ...]; the rest is padding that costs nothing, so callers keep a
        few fixed shapes); last_moves int [S, 2] (last move, the one before; P = pass,
        -1 = none) for heavy and rule playouts.  komi: float, or float [S] or [active] per position.  Returns
        without waiting for the device."""
        total = int(np.shape(states.stones)[0])
        count = total if active is None else int(active)
        komi = np.asarray(komi, np.float32)
        komi = np.full(count, komi, np.float32) if komi.ndim == 0 else komi[:count].copy()
        if self.policy == "light":
            result = light.run(states, key, 0.0, num_per_state=playouts_per_state, active_states=count)
        else:
            result = heavy.run(states, key, 0.0, num_per_state=playouts_per_state, gammas=self.tables,
                               last_moves=last_moves, active_states=count)
        return PendingBatch(result, count, playouts_per_state, komi)

    def evaluate(self, states, key, playouts_per_state: int, komi=0.0, last_moves=None,
                 active: int | None = None) -> PlayoutBatch:
        """``dispatch`` and ``collect`` in one call: a ``PlayoutBatch`` of the ``active`` positions."""
        return self.dispatch(states, key, playouts_per_state, komi, last_moves, active).collect()


def load_log_gammas(path: str | None = None) -> np.ndarray:
    """float32 [K]: log-gammas of a ``jaxgo gammas train`` file, or the shipped ones (path None), checked
    against the feature code's size."""
    loaded = gamma_files.load_default() if path is None else gamma_files.load(path)
    values = np.asarray(loaded.log_gamma, np.float32)
    if values.shape != (move_features.num_features(),):
        raise ValueError(f"gammas {path or 'shipped'}: {values.shape[0]} entries, the feature code has "
                         f"{move_features.num_features()} (retrain or update the file)")
    return values


@functools.lru_cache(maxsize=16)
def make_evaluator(policy: str = "heavy", gammas: str | None = None) -> Evaluator:
    """The evaluator of a playout policy (``SearchConfig.playouts``) and gamma file (None: shipped), cached."""
    if policy == "light":
        return Evaluator("light")
    if policy == "heavy":
        return Evaluator("heavy", heavy.policy_tables(load_log_gammas(gammas)))
    if policy == "rules":
        return Evaluator("rules", rule_policy.rule_tables())
    raise ValueError(f"unknown playout policy {policy!r}; one of {POLICIES}")


def evaluator_for(config) -> Evaluator:
    """The evaluator a ``SearchConfig`` asks for."""
    return make_evaluator(config.playouts, config.gammas)
