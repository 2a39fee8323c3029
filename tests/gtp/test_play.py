"""One engine: every GTP move is the Player's, the first move of its principal variation, and the local engine and
the ``--server`` engine report the same search configuration and follow the same move-choice rules.

Positions are short seeded random games on 9x9.  The local-vs-server checks start both engines from the same
command line (``--playout-policy heavy --bias 1``); the server's own defaults are light playouts without bias,
so its ``searchConfig`` shows that the engine's options reached it through ``overrideSettings``.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go.config import Rules  # noqa: E402
from jaxgo.go.coords import BLACK, WHITE, gtp_to_point, point_to_gtp  # noqa: E402
from jaxgo.go.game import Game  # noqa: E402
from jaxgo.gtp.cli import build_parser, engine_from_args  # noqa: E402
from jaxgo.gtp.engine import make_gtp_engine  # noqa: E402
from jaxgo.gtp.play import config_lines  # noqa: E402
from jaxgo.playouts import POLICIES as PLAYOUT_POLICIES  # noqa: E402
from jaxgo.search.config import SearchConfig  # noqa: E402
from jaxgo.search.tree import rank_actions  # noqa: E402
from jaxgo.server import transports  # noqa: E402
from jaxgo.server.engine import AnalysisEngine  # noqa: E402
from jaxgo.server.engine_config import EngineConfig  # noqa: E402

SIZE, KOMI = 9, 7.5
POSITION_SEEDS = range(32)


def random_position(seed: int) -> list[tuple[int, int]]:
    """(colour, point) moves of a short random game on 9x9: 4 to 40 uniformly chosen legal moves, no passes."""
    rng = np.random.default_rng(seed)
    game = Game(Rules(size=SIZE, komi=KOMI))
    for _ in range(int(rng.integers(4, 41))):
        legal = np.flatnonzero(game.legal_moves(game.to_play)[:-1])
        if not len(legal):
            break
        game.play(game.to_play, int(rng.choice(legal)))
    return list(game.moves)


def load(engine, moves) -> int:
    """Set the engine's board to the moves (after clear_board); the colour to move next."""
    assert engine.handle("clear_board") == "= \n\n"
    for colour, point in moves:
        name = "b" if colour == BLACK else "w"
        assert engine.handle(f"play {name} {point_to_gtp(point, SIZE)}") == "= \n\n"
    return WHITE if moves and moves[-1][0] == BLACK else BLACK


def ask(engine, line: str) -> str:
    response = engine.handle(line)
    assert response is not None and response.startswith("= ") and response.endswith("\n\n"), (line, response)
    return response[2:-2]


def assert_move_is_the_pv_head(engine, colour: int, answer: str) -> None:
    """``answer`` (genmove's) is the first move of the Player's last search, which is the best action by
    ``tree.rank_actions``; a resignation only below the resign threshold after enough playouts."""
    result = engine.session.player.last_result
    config = engine.session.config
    if answer == "resign":
        assert result.win_rate < config.resign_threshold and result.playouts >= config.resign_min_playouts
        return
    move = gtp_to_point(answer, SIZE)
    assert move == result.pv[0] == int(rank_actions(result.visits, result.values)[0])
    assert engine.session.game.moves[-1] == (colour, move)  # played, so legal
    stats = ask(engine, "jaxgo-search_stats")
    assert stats.split(" pv ")[1].split()[0] == answer


# -- genmove plays the PV's first move ------------------------------------------------------------------------
def test_genmove_plays_the_first_move_of_its_principal_variation():
    engine = make_gtp_engine(Rules(size=SIZE, komi=KOMI), SearchConfig(playout_policy="light", bias_c2=0.0), seed=5,
                         playouts=48)
    answers = set()
    for seed in POSITION_SEEDS:
        colour = load(engine, random_position(seed))
        answer = ask(engine, f"genmove {'b' if colour == BLACK else 'w'}")
        assert answer != "resign"  # 48 playouts are fewer than resign_min_playouts
        assert_move_is_the_pv_head(engine, colour, answer)
        answers.add(answer)
    assert len(answers) > 10  # different positions, different moves


# -- the local and the --server engine ------------------------------------------------------------------------
OPTIONS = ["--size", "9", "--komi", "7.5", "--playout-policy", "heavy", "--bias", "1", "--leaves", "8",
           "--playouts", "64", "--resign-min-playouts", "32", "--seed", "3", "--quiet"]

# Black's living wall (columns A-E) and White's (F-J), each with two single-point eyes and a two-point eye space:
# every point is settled; Black's area 45, White's 36, so Black wins by 1.5 with komi 7.5.
SETTLED = [
    "X X X X X O O O O",
    "X . X . X O . O .",
    "X X X X X O O O O",
    "X X X X X O O O O",
    "X . . X X O . . O",
    "X X X X X O O O O",
    "X X X X X O O O O",
    "X . X . X O . O .",
    "X X X X X O O O O",
]


@pytest.fixture(scope="module")
def server_address():
    """An analysis server whose own defaults differ from the engines' options (light playouts, no bias)."""
    config = EngineConfig(search=SearchConfig(playout_policy="light", bias_c2=0.0), max_leaves_per_search=8,
                          max_boards=256, buckets=(256,))
    engine = AnalysisEngine(config).start()
    tcp = transports.TcpServer(engine, 0)
    transports.start_in_thread(tcp)
    yield f"tcp:127.0.0.1:{tcp.server_address[1]}"
    tcp.shutdown()
    tcp.server_close()
    engine.stop(wait=False, timeout=30)


@pytest.fixture(scope="module")
def engines(server_address):
    """(local, remote): ``jaxgo gtp OPTIONS`` and ``jaxgo gtp OPTIONS --server ADDR``."""
    local = engine_from_args(build_parser().parse_args(OPTIONS))
    remote = engine_from_args(build_parser().parse_args(OPTIONS + ["--server", server_address]))
    assert local is not None and remote is not None
    yield local, remote
    remote.session.close()


def settle(engine) -> None:
    """The SETTLED position as setup stones (no moves), Black to move."""
    assert engine.handle("clear_board") == "= \n\n"
    for colour, letter in ((BLACK, "X"), (WHITE, "O")):
        points = [r * SIZE + c for r, row in enumerate(SETTLED) for c, ch in enumerate(row.split()) if ch == letter]
        engine.session.game.setup_stones(colour, points)


def test_local_and_server_engines_report_the_same_search_config(engines):
    local, remote = engines
    expected = SearchConfig(playout_policy="heavy", bias_c2=1.0, leaves_per_batch=8, resign_min_playouts=32)
    assert local.session.config == remote.session.config == expected
    shown = ask(local, "jaxgo-search_config")  # GoGui's typed lines, the same for both
    assert shown == ask(remote, "jaxgo-search_config")
    policies = "/".join(PLAYOUT_POLICIES)
    assert f"[list/{policies}] playout_policy heavy" in shown
    colour = load(remote, random_position(0))
    ask(remote, f"genmove {'b' if colour == BLACK else 'w'}")
    server_config = remote.session.player.search.last_response["searchConfig"]
    assert config_lines(server_config) == config_lines(expected.to_dict())  # what the server searched with


def test_local_and_server_engines_play_their_pv_heads(engines):
    for engine in engines:
        for seed in POSITION_SEEDS[:3]:
            colour = load(engine, random_position(seed))
            answer = ask(engine, f"genmove {'b' if colour == BLACK else 'w'}")
            assert_move_is_the_pv_head(engine, colour, answer)


def test_both_pass_after_the_opponents_pass_when_passing_wins(engines):
    for engine in engines:
        settle(engine)
        session = engine.session
        assert ask(engine, "final_score") == "B+1.5"
        assert session.player.passing_wins(session.game, BLACK)
        ask(engine, "play w pass")
        assert session.player.choose(session.game, BLACK).reason == "passing wins"
        assert ask(engine, "genmove b") == "pass"


def test_both_resign_a_lost_settled_position(engines):
    for engine in engines:
        settle(engine)
        engine.session.game.set_to_play(WHITE)
        assert ask(engine, "genmove w") == "resign"  # White loses by 1.5 whatever it does
        result = engine.session.player.last_result
        assert result.win_rate < 0.08 and result.playouts >= 32
        assert ask(engine, "kgs-genmove_cleanup w") != "resign"  # cleanup never resigns
