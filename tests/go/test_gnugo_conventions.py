"""jaxgo's GTP shell against GNU Go on the same games.

Light-playout games (captures, kos, eyes, filled boards) are replayed through both engines; after every move
the stone lists, capture counts and, periodically, the legal moves of both colours must agree, and at the end
the final score of the settled position must be GNU Go's (Chinese counting = area scoring).
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

from jaxgo.go.config import Rules
from jaxgo.go.coords import point_to_gtp
from jaxgo.go.gtp_client import find_gnugo, gnugo
from jaxgo.gtp.engine import make_gtp_engine
from jaxgo.gtp.protocol import Dispatcher
from jaxgo.playouts.xla import light as playout
from jaxgo.search.config import SearchConfig

pytestmark = [
    pytest.mark.gnugo,
    pytest.mark.skipif(find_gnugo() is None, reason="gnugo not installed (scripts/setup.sh installs it)"),
]

SIZE, KOMI = 9, 7.5


def ours(command: str, engine: Dispatcher) -> str:
    reply = engine.handle(command)
    assert reply.startswith("="), f"jaxgo refused {command!r}: {reply!r}"
    return reply[1:].strip()


def stones(text: str) -> set[str]:
    return set(text.upper().split())


@pytest.fixture(scope="module")
def games():
    result = playout.run_from_empty(SIZE, 6, jax.random.PRNGKey(2024), KOMI, record_moves=True)
    return [np.asarray(m)[np.asarray(m) >= 0] for m in result.moves], np.asarray(result.score)


@pytest.mark.parametrize("game_index", range(6))
def test_replayed_games_agree_with_gnugo(games, game_index):
    moves, scores = games
    rules = Rules(size=SIZE, komi=KOMI, ko_rule="simple")
    engine = make_gtp_engine(rules, SearchConfig(playout_policy="light", bias_c2=0.0))
    ours(f"boardsize {SIZE}", engine)
    ours(f"komi {KOMI}", engine)
    with gnugo(SIZE, KOMI) as reference:
        color = "b"
        for ply, move in enumerate(moves[game_index]):
            vertex = point_to_gtp(int(move), SIZE)
            ours(f"play {color} {vertex}", engine)
            reference.send(f"play {color} {vertex}")
            for who in ("black", "white"):
                assert stones(ours(f"list_stones {who}", engine)) == stones(reference.send(f"list_stones {who}")), \
                    f"ply {ply} {vertex}: {who} stones differ"
                assert ours(f"captures {who}", engine) == reference.send(f"captures {who}")
            if ply % 15 == 0:
                for who in ("black", "white"):
                    assert stones(ours(f"all_legal {who}", engine)) == stones(reference.send(f"all_legal {who}")), \
                        f"ply {ply}: legal moves of {who} differ"
            color = "w" if color == "b" else "b"
        ours_score = ours("final_score", engine)
        assert ours_score == reference.send("final_score")
        expected = scores[game_index]
        assert ours_score == (f"B+{expected:g}" if expected > 0 else f"W+{-expected:g}")
