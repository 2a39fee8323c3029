"""The host board (``jaxgo.go.hostboard``, used for ladder reading and the proof search) against the flood-fill
reference board on random games: the legality of every point and the position after every move."""

from __future__ import annotations

import numpy as np
import pytest

from jaxgo.go.hostboard import Board
from jaxgo.go.reference import ReferenceBoard


@pytest.mark.parametrize("size, games, seed", [(5, 40, 1), (7, 20, 2), (9, 12, 3)])
def test_host_board_plays_like_the_reference_board(size, games, seed):
    rng = np.random.default_rng(seed)
    positions = 0
    for _ in range(games):
        reference, host = ReferenceBoard(size), Board(size)
        for _ in range(2 * size * size):
            legal = reference.legal_mask()[:-1]
            host_legal = np.array([host.play(p) is not None for p in range(size * size)])
            assert host_legal.tolist() == legal.tolist()
            positions += 1
            if not legal.any():
                break
            move = int(rng.choice(np.flatnonzero(legal)))
            reference.play(move)
            host = host.play(move)
            assert host.stones == reference.stones.tolist()
            assert host.ko == reference.ko_point and host.to_play == reference.to_play
    assert positions > 1000
