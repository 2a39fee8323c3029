"""Live analysis on the Player's own tree (``jaxgo.gtp.tree_analysis``): one tree per game in ``jaxgo gtp``, shared
by genmove, pondering and lz-analyze / kata-analyze / genmove_analyze, with the analysis server's line formats."""

from __future__ import annotations

import io
import itertools
import queue
import re
import threading

import numpy as np
import pytest

from jaxgo.go.config import Rules
from jaxgo.go.coords import BLACK, WHITE, gtp_to_point
from jaxgo.go.display import game_from_ascii
from jaxgo.gtp.analysis import open_stream, own_tree
from jaxgo.gtp.engine import make_gtp_engine
from jaxgo.gtp.loop import serve
from jaxgo.gtp.tree_analysis import UNTIL_TERMINATED, RootStatistics, TreeStream
from jaxgo.playouts.evaluator import PlayoutBatch
from jaxgo.search.config import SearchConfig
from jaxgo.search.limits import SearchLimits
from support import ScriptedInput  # noqa: E402

CHEAP = SearchConfig(playout_policy="light", bias_c2=0.0, leaves_per_batch=16)
BUDGET = 256  # playouts per genmove
# Black's wall on the fourth line lives with three eyes on the top edge; one White stone at C2.
POSITION = [
    ". X . X .",
    "X X X X X",
    ". . . . .",
    ". . O . .",
    ". . . . .",
]
B4 = 6  # a point of Black's wall
LZ_MOVE = re.compile(r"info move (pass|[A-HJ-T]\d+) visits \d+ winrate \d+ prior \d+ lcb \d+ order \d+ pv"
                     r"( (pass|[A-HJ-T]\d+))+")
KATA_MOVE = re.compile(r"info move (pass|[A-HJ-T]\d+) visits \d+ utility -?\d+\.\d+ winrate \d\.\d+ "
                       r"scoreMean -?\d+\.\d+ scoreStdev \d+\.\d+ scoreLead -?\d+\.\d+ scoreSelfplay -?\d+\.\d+ "
                       r"prior \d\.\d+ lcb -?\d+\.\d+ utilityLcb -?\d+\.\d+ order \d+ pv( (pass|[A-HJ-T]\d+))+")


def engine_at(rows=POSITION, to_play=BLACK, **options):
    engine = make_gtp_engine(Rules(size=5, komi=0.5), CHEAP, playouts=BUDGET, **options)
    engine.session.game = game_from_ascii(rows, to_play, komi=0.5)
    return engine


def ask(engine, line: str) -> str:
    response = engine.handle(line)
    assert response.startswith("=") and response.endswith("\n\n"), response
    return response[1:].strip()


def streamed(engine, line: str, count: int) -> list[str]:
    """The first ``count`` lines a live-analysis command streams (the read loop's part, here by hand), then its
    end as the next command would end it."""
    assert ask(engine, line) == ""
    stream = engine.session.analysis.stream
    engine.session.analysis.stream = None
    lines = list(itertools.islice((text for text in stream.lines if text), count))
    stream.close()
    return lines


def listed_moves(line: str, size: int = 5) -> list[int]:
    """The points of the moves an info line lists (pass as size * size)."""
    return [gtp_to_point(word, size) for word in re.findall(r"info move (\S+)", line)]


def searcher_of(engine):
    return engine.session.player.tree_searcher(engine.session.game)


def root_visits(tree) -> float:
    return float(tree.children_visits[tree.root][tree.children_legal[tree.root]].sum())


def test_analysis_continues_the_tree_genmove_left_and_the_next_genmove_continues_the_analysis():
    engine = engine_at()
    move = ask(engine, "genmove b")
    tree = searcher_of(engine).tree
    child = int(tree.children_index[tree.root, gtp_to_point(move, 5)])
    left = float(tree.children_visits[child].sum())  # White's replies under Black's move: analysis starts there
    assert left > 0
    lines = streamed(engine, "lz-analyze w 1", 3)
    searcher = searcher_of(engine)
    assert searcher.tree is tree and engine.session.analysis.client is None  # one tree, no analysis engine
    first = sum(int(v) for v in re.findall(r"visits (\d+)", lines[0]))
    assert first >= left  # the first report already holds genmove's visits
    analysed = root_visits(tree)
    assert analysed > left
    ask(engine, "genmove w")
    result = engine.session.player.last_result
    assert searcher.tree is tree and result.playouts >= BUDGET
    assert result.visits.sum() >= analysed + BUDGET  # the analysed visits carried over, then its own budget
    tree.check_consistency()


@pytest.mark.parametrize("kind", ["lz-analyze", "analyze", "kata-analyze"])
def test_lines_keep_their_formats(kind):
    engine = engine_at()
    lines = streamed(engine, f"{kind} b 1 ownership true" if kind == "kata-analyze" else f"{kind} b 1", 2)
    assert len(lines) == 2
    for line in lines:
        moves = ["info move " + part for part in line.split("info move ")[1:]]
        if kind == "kata-analyze":
            moves[-1], owner = moves[-1].split(" ownership ")
            values = owner.split()
            assert len(values) == 25 and all("." in v and -1.0 <= float(v) <= 1.0 for v in values)
            assert float(values[B4]) > 0.5  # Black's living wall, for Black (the side to move)
        pattern = KATA_MOVE if kind == "kata-analyze" else LZ_MOVE
        assert moves and all(pattern.fullmatch(m.strip()) for m in moves), moves
        board = engine.session.game.board().reshape(-1)
        assert all(move == 25 or board[move] == 0 for move in listed_moves(line))  # never an occupied point


def test_kata_analyze_ownership_is_for_the_side_to_move():
    engine = engine_at(to_play=WHITE)
    line = streamed(engine, "kata-analyze 1 ownership true", 1)[0]
    values = [float(v) for v in line.split(" ownership ")[1].split()]
    assert values[B4] < -0.5  # Black's living wall, seen by White


def test_genmove_analyze_plays_the_trees_move_and_leaves_the_tree_for_the_next_move():
    engine = engine_at()
    lines = streamed(engine, "lz-genmove_analyze b 1", 100)
    play = lines[-1]
    assert play.startswith("play ") and all(LZ_MOVE.match(line) for line in lines[:-1])
    move = gtp_to_point(play.split()[1], 5)
    session = engine.session
    assert session.game.moves[-1] == (BLACK, move)
    result = session.player.last_result
    tree = searcher_of(engine).tree
    assert result.playouts >= BUDGET and result.pv[0] == move and result.visits.sum() == root_visits(tree)
    assert session.ponder.requested  # as after genmove: pondering may follow
    child = int(tree.children_index[tree.root, move])
    left = float(tree.children_visits[child].sum())
    streamed(engine, "lz-analyze w 1", 1)
    assert searcher_of(engine).tree is tree and root_visits(tree) > left  # the move's subtree is the new root


def test_a_connection_or_a_player_without_a_tree_keeps_the_query_path():
    local = engine_at()
    assert own_tree(local.session, local.session.game) is searcher_of(local)
    flat = make_gtp_engine(Rules(size=5, komi=0.5), SearchConfig(strategy="mc", playout_policy="light"))
    assert own_tree(flat.session, flat.session.game) is None  # no tree: the in-process analysis engine (RAVE)
    given = make_gtp_engine(Rules(size=5, komi=0.5), CHEAP, analysis=object())  # a server's connection
    assert own_tree(given.session, given.session.game) is None


def test_live_analysis_has_no_playout_limit_and_genmove_analyze_the_players_budget():
    engine = engine_at()
    assert open_stream(engine.session, BLACK, None).limits.playouts == UNTIL_TERMINATED  # until the next command
    assert open_stream(engine.session, BLACK, BUDGET).limits.playouts == BUDGET
    assert open_stream(engine.session, BLACK, None).limits.max_nodes < 10 ** 6  # the node cap bounds the memory


def test_a_new_search_of_the_same_position_keeps_the_tree_as_it_is():
    engine = engine_at()
    streamed(engine, "lz-analyze b 1", 2)
    tree = searcher_of(engine).tree
    size, links = tree.size, tree.children_index[:tree.size].copy()
    open_stream(engine.session, BLACK, BUDGET)  # the same root: nothing dropped, nothing copied (Tree.reroot)
    assert searcher_of(engine).tree is tree and tree.size == size
    assert np.array_equal(tree.children_index[:size], links)


def test_analysis_for_the_other_colour_searches_a_copy_and_leaves_the_game():
    engine = engine_at()
    line = streamed(engine, "lz-analyze w 1", 1)[0]
    assert LZ_MOVE.match(line) and engine.session.game.to_play == BLACK and not engine.session.game.moves
    assert searcher_of(engine).tree.to_play[searcher_of(engine).tree.root] == WHITE


def test_jaxgo_pv_gfx_searches_the_players_tree():
    engine = engine_at()
    answer = ask(engine, "jaxgo-pv_gfx 32")
    assert re.fullmatch(r"VAR b ([A-E][1-5]|pass)( [bw] ([A-E][1-5]|pass))*", answer), answer
    assert root_visits(searcher_of(engine).tree) >= 32 and engine.session.analysis.client is None


def test_a_terminated_stream_ends_with_its_final_response_after_whole_batches():
    engine = engine_at()
    searcher = searcher_of(engine)
    stream = TreeStream(searcher, engine.session.game, SearchLimits(playouts=10 ** 6), 16)
    with pytest.raises(queue.Empty):
        stream.get(timeout=0)  # one batch; no report was asked for
    assert stream.job.done == 16 * CHEAP.playouts_per_leaf and stream.job.pending is None
    stream.terminate()
    final = stream.get(timeout=0)
    assert not final["isDuringSearch"] and final["rootInfo"]["visits"] == root_visits(searcher.tree) == 64
    assert stream.result.playouts == 64 and stream.result.move == gtp_to_point(final["moveInfos"][0]["move"], 5)
    with pytest.raises(queue.Empty):
        stream.get(timeout=0)  # nothing after the final response
    searcher.tree.check_consistency()


def test_root_statistics_add_up_like_numpy():
    rng = np.random.default_rng(0)
    size, leaves, per_leaf = 5, 12, 3
    batch = PlayoutBatch(winner=np.zeros((leaves, per_leaf), np.int8),
                         score=rng.normal(0, 10, (leaves, per_leaf)).astype(np.float32),
                         ownership=rng.integers(-1, 2, (leaves, per_leaf, size * size)).astype(np.int8),
                         first_colour=np.zeros((leaves, per_leaf, size * size), np.int8))
    root_actions = rng.integers(-1, size * size + 1, leaves).astype(np.int64)
    stats = RootStatistics(size)
    stats.add(batch, root_actions)
    scores = batch.score.astype(np.float64)
    expected_sum, expected_n = np.zeros(26), np.zeros(26)
    counted = root_actions >= 0
    np.add.at(expected_sum, root_actions[counted], scores[counted].sum(axis=1))
    np.add.at(expected_n, root_actions[counted], per_leaf)
    np.testing.assert_allclose(stats.score_sum, expected_sum)
    np.testing.assert_array_equal(stats.score_n, expected_n)
    np.testing.assert_allclose(stats.ownership(), batch.ownership.reshape(-1, 25).mean(axis=0))
    assert stats.owner_n == leaves * per_leaf and np.isclose(stats.root_mean(), scores.mean())


def session(engine, script) -> tuple[int, str]:
    out = io.StringIO()
    status = []
    thread = threading.Thread(target=lambda: status.append(serve(engine, ScriptedInput(script), out)), daemon=True)
    thread.start()
    thread.join(300)
    assert not thread.is_alive(), "the GTP session hung"
    return status[0], out.getvalue()


@pytest.mark.parametrize("end", [b"quit\n", b""])
def test_an_odd_argument_is_a_gtp_error_and_the_session_goes_on_to_exit_zero(end):
    engine = engine_at(ponder=True)
    script = [(0, b"lz-analyze x y\n"), (0, b"kata-analyze b 10 ownership maybe\n"), (0, b"genmove b\n"),
              (0.3, b"lz-analyze w 5\n"), (0.5, b"name\n")] + ([(0, end)] if end else [])
    status, out = session(engine, script)
    replies = out[:-2].split("\n\n")
    assert status == 0 and replies[0].startswith("? ") and replies[1].startswith("? ")
    assert re.fullmatch(r"= [A-E][1-5]|= pass", replies[2]) and replies[4] == "= jaxgo"
    assert len(replies) == (6 if end else 5)
    head, *lines = replies[3].split("\n")  # pondered after genmove, stopped before the analysis
    assert head == "=" and lines and all(LZ_MOVE.match(line) for line in lines)
    searcher_of(engine).tree.check_consistency()


def test_pondering_never_runs_beside_an_analysis_of_the_same_tree(monkeypatch):
    engine = engine_at(ponder=True)
    seen = []
    batch = TreeStream._batch

    def watched(self):
        seen.append(any(t.name == "gtp-ponder" and t.is_alive() for t in threading.enumerate()))
        batch(self)

    monkeypatch.setattr(TreeStream, "_batch", watched)
    # the analysis arrives while the ponder search that follows genmove runs (its 4 x 256 playouts take longer)
    status, out = session(engine, [(0, b"genmove b\n"), (0, b"kata-analyze w 5\n"), (0.5, b"genmove w\n"),
                                   (0, b"quit\n")])
    replies = out[:-2].split("\n\n")
    assert status == 0 and len(replies) == 4 and replies[1].startswith("=\ninfo move ")
    assert seen and not any(seen)  # every analysis batch ran with the ponder search stopped
    searcher_of(engine).tree.check_consistency()
