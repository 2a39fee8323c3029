"""``EarlyGame`` (the plain-Python board of a GUI's first moves) against ``jaxgo.go.game.Game`` on random games:
the same legal moves (occupied, ko, suicide, positional and situational superko, moves out of turn), the same
stones and captures, the same undo."""

from __future__ import annotations

import numpy as np
import pytest

from jaxgo.go.config import Rules
from jaxgo.go.game import Game
from jaxgo.gtp.early import EarlyGame

MOVES = 100


def random_game_check(rules: Rules, seed: int) -> int:
    """Play a random game on both boards; returns the number of illegal tries that both refused."""
    rng = np.random.default_rng(seed)
    early, game = EarlyGame(rules), Game(rules)
    points = rules.size * rules.size
    refused = 0
    for step in range(MOVES):
        colour = early.to_play if rng.random() < 0.85 else -early.to_play  # sometimes out of turn
        if rng.random() < 0.08 and game.moves:
            assert early.undo()
            game.undo()
            continue
        crowded = rng.random() < 0.5  # half the tries near the last moves: captures, ko, suicide come fast
        if crowded and early.moves and early.moves[-1][1] < points:
            last = early.moves[-1][1]
            move = int(np.clip(last + rng.choice([-rules.size, -1, 1, rules.size, 0]), 0, points - 1))
        else:
            move = int(rng.integers(points + 1)) if rng.random() < 0.97 else points
        reason = early.illegal_reason(colour, move)
        assert (reason is None) == game.is_legal(colour, move), (step, colour, move, reason,
                                                                  game.illegal_reason(colour, move))
        if reason is None:
            assert early.play(colour, move) is None
            game.play(colour, move)
        else:
            refused += 1
            assert early.play(colour, move) == reason
        assert np.array_equal(early.board(), game.board()), step
        assert early.to_play == game.to_play
        assert [early.captures(c) for c in (1, -1)] == [game.captures(c) for c in (1, -1)]
    return refused


@pytest.mark.parametrize("ko_rule", ["simple", "positional", "situational"])
@pytest.mark.parametrize("suicide", [False, True])
def test_early_game_plays_like_game(ko_rule, suicide):
    refused = sum(random_game_check(Rules(size=size, komi=7.5, ko_rule=ko_rule, suicide=suicide), seed)
                  for size in (4, 5) for seed in range(2))
    assert refused > 0  # the games did meet illegal moves


def test_early_game_reasons():
    early = EarlyGame(Rules(size=5, ko_rule="simple"))
    for colour, vertex in [(1, "B3"), (1, "C4"), (1, "C2"), (-1, "D4"), (-1, "D2"), (-1, "E3"), (-1, "C3")]:
        assert early.play(colour, to_point(vertex)) is None  # moves out of turn are allowed, as in GTP
    assert early.play(1, to_point("D3")) is None  # Black takes C3: a ko
    assert early.captures(1) == 1 and early.illegal_reason(-1, to_point("C3")) == "ko"
    assert early.illegal_reason(-1, to_point("D3")) == "occupied"
    assert early.illegal_reason(1, 99) == "off board" and early.illegal_reason(1, 25) is None  # 25 = pass
    assert early.undo() and early.illegal_reason(1, to_point("C3")) == "occupied" and early.captures(1) == 0
    suicide = EarlyGame(Rules(size=5))
    for colour, vertex in [(1, "A2"), (1, "B1")]:
        suicide.play(colour, to_point(vertex))
    assert suicide.illegal_reason(-1, to_point("A1")) == "suicide"


def to_point(vertex: str) -> int:
    from jaxgo.go.coords import gtp_to_point

    return gtp_to_point(vertex, 5)
