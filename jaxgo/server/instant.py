"""A stand-in for the playouts of a server benchmark (``jaxgo bench serve --host-only``): results that cost
nothing, so that a run measures only the server's host work."""

from __future__ import annotations

import numpy as np


class InstantPlayouts:
    """An ``Evaluator`` stand-in whose playouts cost nothing: fixed random results (drawn once per L and board;
    each call gets views of their first rows), returned at once, so that a server run measures only its host
    work.  Built like ``evaluator_for(config, devices, stones)``."""

    backend = "instant"
    devices = 1

    def __init__(self, config, devices: int = 1, stones=None):
        self.policy = config.playout_policy
        self._batches = _INSTANT_BATCHES  # shared by every instance (a server makes one per search)

    def dispatch(self, states, key, playouts_per_state: int, komi=0.0, last_moves=None, active=None):
        from jaxgo.playouts.evaluator import PlayoutBatch

        count = int(active if active is not None else np.shape(states.stones)[0])
        key = (playouts_per_state, int(np.shape(states.stones)[1]))
        batch = self._batches.get(key)
        if batch is None or len(batch.winner) < count:  # drawn once per shape, grown rarely: views after that
            rows = max(count, 2 * len(batch.winner) if batch is not None else 4096)
            rng = np.random.default_rng(rows)
            winner = rng.choice(np.array([-1, 1], np.int8), (rows, key[0]))
            batch = self._batches[key] = PlayoutBatch(
                winner=winner, score=(winner * rng.uniform(0.5, 20.0, (rows, key[0]))).astype(np.float32),
                ownership=rng.choice(np.array([-1, 1], np.int8), (rows,) + key),
                first_colour=rng.choice(np.array([0, 1, -1], np.int8), (rows,) + key))
        return _Ready(PlayoutBatch(winner=batch.winner[:count], score=batch.score[:count],
                                   ownership=batch.ownership[:count], first_colour=batch.first_colour[:count]))


_INSTANT_BATCHES: dict = {}  # (L, P) -> the PlayoutBatch whose first rows every InstantPlayouts call returns


class _Ready:
    def __init__(self, batch):
        self.batch = batch

    def ready(self) -> None:
        pass

    def collect(self):
        return self.batch
