"""KaTrain's own engine code against ``jaxgo serve``.

KaTrain (pip ``katrain``, the ``clients`` extra) is driven headless: its ``KataGoEngine`` starts ``jaxgo
serve`` as a subprocess (its "custom" backend: a command line run by a shell) and talks the KataGo analysis
protocol over the pipes; its ``Game`` analyses the positions; its AI strategies choose moves.  No window is
opened (KaTrain's core imports only Kivy's configuration, storage and utilities; KIVY_NO_ARGS keeps Kivy away
from pytest's command line).
"""

import os
import sys
import threading
import time

import pytest

TIMEOUT = 240
KIVY_ENV = {"KIVY_NO_ARGS": "1", "KIVY_NO_CONSOLELOG": "1", "KIVY_NO_FILELOG": "1"}


def katrain_engine(tmp_path_factory, serve_options: list, **engine_options):
    """(KaTrain base object, its KataGoEngine on `jaxgo serve SERVE_OPTIONS`, KaTrain's Game class and the
    strategies), the engine configured with ``engine_options``; a generator (a fixture's body)."""
    saved = {key: os.environ.get(key) for key in list(KIVY_ENV) + ["KIVY_HOME"]}
    os.environ.update(KIVY_ENV, KIVY_HOME=str(tmp_path_factory.mktemp("kivy")))
    try:
        pytest.importorskip("katrain")
        from katrain.core import ai, constants
        from katrain.core.base_katrain import KaTrainBase
        from katrain.core.engine import KataGoEngine
        from katrain.core.game import Game
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    class HeadlessKaTrain(KaTrainBase):
        """KaTrain's base object with its log kept in a list and GUI calls (popups) recorded."""

        def __init__(self):
            self.lines, self.calls = [], []
            super().__init__(force_package_config=True, debug_level=0)

        def log(self, message, level=constants.OUTPUT_INFO):
            self.lines.append((level, str(message)))

        def __call__(self, *args, **kwargs):
            self.calls.append(args)

        def errors(self):
            return [text for level, text in self.lines if level == constants.OUTPUT_ERROR]

    base = HeadlessKaTrain()
    config = dict(base.config("engine"))
    serve = " ".join([sys.executable, "-m", "jaxgo", "serve", "--quiet", *serve_options])
    config.update(backend="custom", altcommand=f"exec env JAX_PLATFORMS=cpu {serve}", **engine_options)
    engine = KataGoEngine(base, config)
    yield {"katrain": base, "engine": engine, "Game": Game, "ai": ai, "constants": constants}
    process = engine.katago_process
    engine.shutdown(finish=False)  # KaTrain terminates the process (SIGTERM)
    assert process.wait(TIMEOUT) == 0  # jaxgo serve stops cleanly on SIGTERM
    assert not base.errors(), base.errors()[:3]


@pytest.fixture(scope="module")
def katrain(tmp_path_factory):
    """A small engine: light playouts, 32 visits (a loaded machine must not cut them short: maxTime 30)."""
    yield from katrain_engine(tmp_path_factory, ["--playout-policy", "light", "--bias", "0", "--max-boards", "64"],
                              max_visits=32, fast_visits=8, max_time=30.0)


@pytest.fixture(scope="module")
def katrain_defaults(tmp_path_factory):
    """`jaxgo serve` with its defaults, KaTrain's 500 visits (maxTime 120 on a loaded machine, not KaTrain's 8)."""
    yield from katrain_engine(tmp_path_factory, [], max_visits=500, fast_visits=500, max_time=120.0)


def new_game(kt, size=9):
    """A KaTrain game (komi 7.5, Chinese rules) whose empty board has been analysed."""
    game = kt["Game"](kt["katrain"], kt["engine"], game_properties={"SZ": size, "KM": 7.5, "RU": "chinese"})
    wait_for(lambda: game.current_node.analysis_complete)
    return game


def wait_for(condition, timeout=TIMEOUT):
    deadline = time.time() + timeout
    while not condition():
        assert time.time() < deadline, "KaTrain did not get its analysis"
        time.sleep(0.05)


def request(kt, node, **options):
    """KaTrain's request_analysis with a callback that keeps the final result (and errors)."""
    done, out = threading.Event(), {}

    def callback(result, partial):
        if not partial:
            out["result"] = result
            done.set()

    def error_callback(error):
        out["error"] = error
        done.set()

    kt["engine"].request_analysis(node, callback, error_callback=error_callback, **options)
    assert done.wait(TIMEOUT)
    return out


def test_analysis_of_katrain_game_nodes(katrain):
    game = new_game(katrain)
    root = game.root
    assert root.analysis["root"]["visits"] >= 32 and len(root.policy) == 82 and len(root.ownership) == 81
    from pysgf import Move

    node = game.play(Move.from_gtp("E5", player="B"))
    wait_for(lambda: node.analysis_complete)
    candidates = node.candidate_moves
    assert candidates and all("pointsLost" in c for c in candidates) and "E5" not in {c["move"] for c in candidates}
    assert node.analysis["root"]["currentPlayer"] == "W"
    assert abs(node.score) < 81 and 0 <= node.winrate <= 1


def test_pondering_starts_and_is_terminated(katrain):
    game = new_game(katrain)
    engine, node = katrain["engine"], game.current_node
    start = node.analysis["root"]["visits"]
    node.analyze(engine, ponder=True)  # maxVisits 10,000,000, reports every 0.25 s
    wait_for(lambda: engine.ponder_query is not None and node.analysis["root"]["visits"] > start + 64)
    engine.stop_pondering()  # terminate; the final result still arrives
    wait_for(engine.is_idle)
    assert node.analysis["root"]["visits"] < 10_000_000


def test_ai_simple_uses_per_move_ownership(katrain):
    game = new_game(katrain)
    settings = dict(katrain["katrain"].config("ai/" + katrain["constants"].AI_SIMPLE_OWNERSHIP))
    node = game.current_node
    move, played = katrain["ai"].generate_ai_move(game, katrain["constants"].AI_SIMPLE_OWNERSHIP, settings)
    assert played is not None and not move.is_pass
    assert all("ownership" in d and len(d["ownership"]) == 81 for d in node.analysis["moves"].values())


def test_ai_policy_does_not_play_the_corner_point_on_an_empty_board(katrain):
    # On an empty board the uniform policy ranked A9 (the 1-1 point) first; the gammas' policy does not.
    corners = {"A1", "A9", "J1", "J9"}
    for settings in ({"opening_moves": 0}, dict(katrain["katrain"].config("ai/ai:policy"))):
        game = new_game(katrain)
        ranking = [m.gtp() for _, m in game.current_node.policy_ranking[:5]]
        assert not corners & set(ranking)
        move, played = katrain["ai"].generate_ai_move(game, katrain["constants"].AI_POLICY, settings)
        assert played is not None and move.gtp() not in corners and not move.is_pass


def test_find_alternatives_and_region_of_interest_use_avoid_moves(katrain):
    game = new_game(katrain)
    node = game.current_node
    known = set(node.analysis["moves"])
    alternatives = request(katrain, node, find_alternatives=True)["result"]
    assert alternatives["moveInfos"] and not {m["move"] for m in alternatives["moveInfos"]} & known
    # Region of interest: columns C..E, rows 3..5 (KaTrain's x/y from the bottom-left, 0-based).
    region = request(katrain, node, region_of_interest=[2, 4, 2, 4])["result"]
    inside = {f"{c}{r}" for c in "CDE" for r in (3, 4, 5)} | {"pass"}
    assert region["moveInfos"] and {m["move"] for m in region["moveInfos"]} <= inside


def test_illegal_moves_are_caught_by_katrain_and_reported_by_the_engine(katrain):
    from katrain.core.game import IllegalMoveException
    from pysgf import Move

    game = new_game(katrain)
    game.play(Move.from_gtp("E5", player="B"))
    with pytest.raises(IllegalMoveException):  # KaTrain's own rules check
        game.play(Move.from_gtp("E5", player="W"))
    # A query with an illegal next move: the engine's error names it as KataGo does, which KaTrain's sweep
    # recognises ("Illegal move" in the error) and does not log as an error.
    node = game.current_node
    errors_before = len(katrain["katrain"].errors())
    out = request(katrain, node, next_move=Move.from_gtp("E5", player="W"))
    assert out["error"]["error"] == f"Illegal move {len(node.nodes_from_root) - 1}: E5"
    done = threading.Event()
    katrain["engine"].request_analysis(node, lambda *a: done.set(), next_move=Move.from_gtp("E5", player="W"))
    wait_for(katrain["engine"].is_idle)
    assert len(katrain["katrain"].errors()) == errors_before


@pytest.mark.slow
@pytest.mark.parametrize("size, bad, good", [(19, "A1", "D4"), (9, "A1", "E5")])
def test_a_corner_point_is_shown_losing_more_than_a_good_first_move(katrain_defaults, size, bad, good):
    """KaTrain's points lost (the parent's score minus the child's, for the mover) of Black's first move on the
    empty board: the 1-1 point at least 5 points more than the 4-4 point (19x19) or tengen (9x9)."""
    from pysgf import Move

    lost = {}
    for vertex in (bad, good):
        game = new_game(katrain_defaults, size)
        node = game.play(Move.from_gtp(vertex, player="B"))
        wait_for(lambda n=node: n.analysis_complete)
        lost[vertex] = node.points_lost
    assert lost[bad] >= lost[good] + 5, lost
