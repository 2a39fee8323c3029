"""Stone status (alive / dead / seki): the static seki rule, ownership judgement, and agreement with GNU Go."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go.coords import point_to_gtp  # noqa: E402
from jaxgo.go.gtp_client import find_gnugo, gnugo  # noqa: E402
from jaxgo.go.reference import ReferenceBoard  # noqa: E402
from jaxgo.go.status import seki_points, stone_status  # noqa: E402

# Eyeless seki: the white chain C7-C3,D3-D1 and the black chain E7-E1 share their only liberties D7-D4.
NO_EYE_SEKI = """
. X O . X O .
X X O . X O O
. X O . X O .
X X O . X O O
X X O O X O .
X X X O X O O
. X X O X O .
"""

# One eye each: black A6,B6,C6,B7 (eye A7) and white D7,D6,E6,F6,F7 (eye E7) share C7, their last liberty
# besides the eyes; both walls around them live.
ONE_EYE_SEKI = """
. X . O . O X
X X X O O O X
O O O X X X X
O . O X . X .
O O O X X X X
. O . O O O O
O O O O . O .
"""

# NO_EYE_SEKI with all but one shared liberty filled: the chains are in atari, whoever moves captures; no seki.
ONE_SHARED_LIBERTY = """
. X O O X O .
X X O O X O O
. X O . X O .
X X O O X O O
X X O O X O .
X X X O X O O
. X X O X O .
"""


def board_of(text: str) -> np.ndarray:
    return ReferenceBoard.from_ascii(text).stones.copy()


def vertices(board: np.ndarray, mask: np.ndarray) -> set[str]:
    size = int(round(len(board) ** 0.5))
    return {point_to_gtp(int(p), size) for p in np.flatnonzero(mask)}


def test_eyeless_chains_sharing_all_liberties_are_seki():
    board = board_of(NO_EYE_SEKI)
    assert vertices(board, seki_points(board)) == {
        "C7", "C6", "C5", "C4", "C3", "D3", "D2", "D1", "E7", "E6", "E5", "E4", "E3", "E2", "E1"}


def test_one_eye_each_and_a_shared_liberty_is_seki():
    board = board_of(ONE_EYE_SEKI)
    assert vertices(board, seki_points(board)) == {"A6", "B6", "C6", "B7", "D7", "D6", "E6", "F6", "F7"}


def test_a_single_shared_liberty_is_not_seki():
    board = board_of(ONE_SHARED_LIBERTY)
    assert not seki_points(board).any()


def test_ownership_decides_dead_and_alive_outside_seki():
    board = board_of(NO_EYE_SEKI)
    owner = np.where(board != 0, board, 0).astype(float)
    owner[board == 1] = -1.0  # pretend the playouts gave every black stone to White
    status = stone_status(board, owner)
    assert set(status[board == 1][np.isin(np.flatnonzero(board == 1), np.flatnonzero(seki_points(board)))]) == {"seki"}
    outside_black = (board == 1) & ~seki_points(board)
    assert set(status[outside_black]) == {"dead"}
    assert set(status[(board == -1) & ~seki_points(board)]) == {"alive"}
    assert set(status[board == 0]) == {""}


@pytest.mark.gnugo
@pytest.mark.skipif(find_gnugo() is None, reason="gnugo not installed (scripts/setup.sh installs it)")
@pytest.mark.parametrize("text", [NO_EYE_SEKI, ONE_EYE_SEKI, ONE_SHARED_LIBERTY],
                         ids=["no-eye", "one-eye", "one-shared-liberty"])
def test_seki_lists_agree_with_gnugo(text):
    board = board_of(text)
    size = int(round(len(board) ** 0.5))
    with gnugo(size, 0.5) as engine:
        for colour, name in ((1, "black"), (-1, "white")):
            stones = " ".join(point_to_gtp(int(p), size) for p in np.flatnonzero(board == colour))
            for vertex in stones.split():
                engine.send(f"play {name} {vertex}")
                engine.send(f"play {'white' if colour == 1 else 'black'} pass")
        theirs = set(engine.send("final_status_list seki").split())
    assert vertices(board, seki_points(board)) == theirs


def test_gtp_engine_reports_seki_and_scores_it_like_gnugo():
    from jaxgo.go.config import Rules
    from jaxgo.gtp.engine import make_gtp_engine
    from jaxgo.search.config import SearchConfig

    config = SearchConfig(playout_policy="light", bias_c2=0.0, leaves_per_batch=8, playouts_per_leaf=4)
    engine = make_gtp_engine(Rules(size=7, komi=0.5), config, seed=0, playouts=64)
    board = board_of(NO_EYE_SEKI)
    for colour in (1, -1):
        engine.session.game.setup_stones(colour, [int(p) for p in np.flatnonzero(board == colour)])
    assert engine.handle("final_status_list dead") == "= \n\n"  # playouts alone would kill one chain
    seki = set(engine.handle("final_status_list seki")[2:].split())
    assert seki == vertices(board, seki_points(board))
    engine.handle("play b pass")
    engine.handle("play w pass")
    assert engine.handle("final_score") == "= B+0.5\n\n"  # GNU Go 3.8 --chinese-rules says B+0.5 too
