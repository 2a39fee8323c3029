"""Replaying a query's game into the positions of its analysed turns; avoid/allowMoves masks."""

import numpy as np
import pytest

from jaxgo.search.tree import STATE_FIELDS
from jaxgo.server import positions, protocol
from jaxgo.server.protocol import RequestError


def parse(**extra):
    query = {"id": "q", "moves": [], "rules": "chinese", "komi": 0.5, "boardXSize": 5, "boardYSize": 5}
    query.update(extra)
    return protocol.parse_request(query)


@pytest.mark.parametrize("moves, text, reason", [
    ([["B", "C3"], ["W", "C3"]], "Illegal move 1: C3", "occupied"),
    # White A1 is suicide under Chinese rules (no suicide): Black B1 and A2 surround it.
    ([["B", "B1"], ["W", "E5"], ["B", "A2"], ["W", "A1"]], "Illegal move 3: A1", "suicide"),
])
def test_illegal_moves_get_katago_texts(moves, text, reason):
    with pytest.raises(RequestError) as info:
        positions.replay(parse(moves=moves))
    assert info.value.to_json() == {"error": text, "field": "moves", "id": "q", "reason": reason}
    assert "Illegal move" in info.value.message  # KaTrain's test


def test_turns_are_independent_positions_with_the_side_to_move_of_the_next_move():
    turns = positions.replay(parse(moves=[["B", "C3"], ["B", "D4"], ["W", "pass"]], analyzeTurns=[0, 1, 3]))
    assert [t.number for t in turns] == [0, 1, 3]
    assert turns[0].game.to_play == 1 and turns[1].game.to_play == 1  # Black moves twice: Black to play at 1
    assert turns[2].game.to_play == 1 and turns[2].game.board()[2][2] == 1 and turns[0].game.board()[2][2] == 0
    assert turns[2].game.rules.ko_rule == "situational"  # the query's own rules after the replay
    for turn in turns:  # each position in host arrays (the search reads them without JAX's conversions)
        assert all(type(getattr(turn.game.state, name)) is np.ndarray for name in STATE_FIELDS)
    turns[2].game.play(-1, 0)  # and the game goes on from there
    assert turns[2].game.board()[0][0] == -1


def test_initial_stones_and_player():
    (turn,) = positions.replay(parse(initialStones=[["W", "B1"], ["B", "A2"]], initialPlayer="W"))
    assert turn.game.to_play == -1 and turn.game.board()[4][1] == -1 and turn.game.board()[3][0] == 1


def test_forbidden_actions_follow_player_and_depth():
    query = parse(avoidMoves=[{"player": "B", "moves": ["A1", "pass"], "untilDepth": 3}],
                  allowMoves=[{"player": "W", "moves": ["C3"], "untilDepth": 1}])
    black0 = positions.forbidden_actions(query, 1, 0, 26)
    assert black0[20] and black0[25] and black0.sum() == 2  # A1 is point 20 (row 0 at the top)
    assert positions.forbidden_actions(query, 1, 3, 26) is None  # below untilDepth
    white0 = positions.forbidden_actions(query, -1, 0, 26)
    assert not white0[12] and not white0[25] and white0.sum() == 24  # only C3 (and pass) allowed
    assert positions.forbidden_actions(query, -1, 1, 26) is None
    assert positions.max_restricted_depth(query) == 3
    assert np.array_equal(positions.forbidden_actions(parse(), 1, 0, 26) is None, True)


def test_the_replay_cache_replays_only_the_new_moves():
    cache = positions.ReplayCache(entries=2)
    moves = [["B", "C3"], ["W", "D4"], ["B", "B2"]]
    positions.replay(parse(moves=moves[:2]), cache)
    game, start = cache.longest_prefix(parse(moves=moves), limit=3)
    assert start == 2 and game.board()[1][3] == -1  # D4 is there
    (turn,) = positions.replay(parse(moves=moves), cache)
    fresh = positions.replay(parse(moves=moves))[0]
    assert turn.number == 3 and np.array_equal(turn.game.board(), fresh.game.board())
    assert turn.game.to_play == fresh.game.to_play and turn.game.position_keys() == fresh.game.position_keys()
    assert cache.longest_prefix(parse(moves=moves, analyzeTurns=[1]), limit=1) == (None, 0)  # turn 1 comes first
    assert cache.longest_prefix(parse(moves=[["B", "C3"], ["W", "E5"]]), limit=2)[1] == 0  # another game
    with pytest.raises(RequestError, match="Illegal move 3: C3"):  # an illegal move after a cached prefix
        positions.replay(parse(moves=moves + [["W", "C3"]]), cache)
