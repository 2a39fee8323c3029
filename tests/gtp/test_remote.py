"""GTP over the server: the thin front end (``make_remote_gtp_engine``), streamed lz-analyze / kata-analyze,
fuzzed GTP input."""

import io
import random
import threading

import pytest

from jaxgo.go.config import Rules
from jaxgo.gtp.engine import make_gtp_engine, make_remote_gtp_engine
from jaxgo.gtp.loop import serve
from jaxgo.search.config import SearchConfig
from jaxgo.server import transports
from jaxgo.server.client import ServerClient
from jaxgo.server.engine import AnalysisEngine
from jaxgo.server.engine_config import EngineConfig
from support import ScriptedInput  # noqa: E402

CHEAP = SearchConfig(playout_policy="light", bias_c2=0.0)


def small_server_config() -> EngineConfig:
    """One padded batch shape (256 leaves) and few leaves per search: cheap to compile."""
    return EngineConfig(search=CHEAP, max_leaves_per_search=8, max_boards=256, buckets=(256,))

TIMEOUT = 240


@pytest.fixture(scope="module")
def address():
    engine = AnalysisEngine(small_server_config()).start()
    tcp = transports.TcpServer(engine, 0)
    transports.start_in_thread(tcp)
    yield f"tcp:127.0.0.1:{tcp.server_address[1]}"
    tcp.shutdown()
    tcp.server_close()
    engine.stop(wait=False, timeout=30)



def run_session(engine, script, timeout=TIMEOUT):
    out = io.StringIO()
    thread = threading.Thread(target=serve, args=(engine, ScriptedInput(script), out), daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), "GTP session hung"
    return out.getvalue()


def frontend(address, playouts=32):
    return make_remote_gtp_engine(ServerClient(address), Rules(size=5, komi=0.5), CHEAP, playouts=playouts)


def test_frontend_genmove_goes_through_the_server(address):
    engine = frontend(address)
    out = run_session(engine, [(0, b"play b c3\n"), (0, b"1 genmove w\n"), (0, b"jaxgo-search_stats\n"),
                               (0, b"final_status_list dead\n"), (0, b"quit\n")])
    replies = [r.strip() for r in out.split("\n\n")]
    assert replies[0] == "="
    move = replies[1]
    assert move.startswith("=1 ") and move[3:] != "C3"
    assert move[3:] == "pass" or (move[3] in "ABCDE" and move[4] in "12345")
    assert replies[2].startswith("= genmove: playouts ")
    assert replies[3].startswith("=")


def test_search_statistics_show_the_last_analysis(address):
    """GoGui's "Search statistics" showed the last genmove, not the analysis just run (issue 47)."""
    engine = frontend(address)
    out = run_session(engine, [(0, b"play b c3\n"), (0, b"1 genmove w\n"), (0, b"lz-analyze 10\n"),
                               (4.0, b"2 jaxgo-search_stats\n"), (0, b"3 genmove b\n"),
                               (0, b"4 jaxgo-search_stats\n"), (0, b"quit\n")])
    replies = {r.split()[0]: r for r in (block.strip() for block in out.split("\n\n")) if r.startswith("=")}
    assert replies["=2"].startswith("=2 lz: playouts ")
    assert replies["=4"].startswith("=4 genmove: playouts ")


def test_kata_analyze_streams_until_the_next_command(address):
    engine = frontend(address)
    out = run_session(engine, [(0, b"play b c3\n"), (0, b"kata-analyze 10 ownership true\n"),
                               (6.0, b"name\n"), (0, b"quit\n")])
    head, rest = out.split("\n\n", 1)[1].split("\n", 1)  # after play's "=": the analyze response
    assert head == "="
    body, after = rest.split("\n\n", 1)
    lines = body.splitlines()
    assert lines and all(line.startswith("info move ") for line in lines)
    last = lines[-1]
    assert " winrate " in last and " scoreLead " in last and " pv " in last
    owner = last.split(" ownership ")[1].split()
    assert len(owner) == 25 and all(-1 <= float(v) <= 1 for v in owner)
    assert after.startswith("= jaxgo")  # the next command was answered after the stream ended


def test_lz_genmove_analyze_ends_with_the_move(address):
    engine = frontend(address)
    out = run_session(engine, [(0, b"lz-genmove_analyze b 5\n"), (0, b"list_stones black\n"), (0, b"quit\n")])
    first, second = out.split("\n\n")[:2]
    lines = first.splitlines()
    assert lines[0] == "=" and lines[-1].startswith("play ")
    for line in lines[1:-1]:
        assert line.startswith("info move ") and " winrate " in line
        int(line.split(" winrate ")[1].split()[0])  # x10000 integer, as Leela Zero writes it
    assert second == "= " + lines[-1][5:]  # the move was played for Black


def test_gogui_commands_of_the_frontend(address):
    engine = frontend(address)
    listed = engine.handle("gogui-analyze_commands")
    assert "dboard/Ownership (playouts)/jaxgo-ownership" in listed and "gfx/" in listed
    gfx = engine.handle("jaxgo-pv_gfx 32")
    assert gfx.startswith("= VAR b ")
    board = engine.handle("jaxgo-ownership 32").strip("= \n").splitlines()
    assert len(board) == 5 and all(len(row.split()) == 5 for row in board)


def random_lines(seed, count=60):
    rng = random.Random(seed)
    words = ["play", "genmove", "boardsize", "komi", "b", "w", "C3", "pass", "lz-analyze", "kata-analyze",
             "undo", "list_commands", "known_command", "#", "\t", "1", "-5", "999999999999", "ownership"]
    lines = []
    for k in range(count):
        if k % 3 == 0:
            lines.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60))).replace(b"\n", b" ") + b"\n")
        else:
            text = " ".join(rng.choice(words) for _ in range(rng.randrange(1, 5)))
            lines.append(text.replace("genmove", "is_legal").replace("analyze", "analyse").encode() + b"\n")
    return lines


def test_fuzzed_input_to_the_gtp_engine_never_crashes():
    engine = make_gtp_engine(Rules(size=5), SearchConfig(strategy="random"))
    for line in random_lines(1, 200):
        response = engine.handle(line.decode("utf-8", "replace"))
        assert response is None or (response[0] in "=?" and response.endswith("\n\n"))
    assert engine.handle("name") == "= jaxgo\n\n"


def test_fuzzed_and_oversized_input_to_the_frontend(address):
    engine = frontend(address)
    script = [(0, line) for line in random_lines(2)]
    script += [(0, b"boardsize 5\n"), (0, b"play b " + b"C" * 200000 + b"\n"), (0, b"play b c3 \xff\xfe\n"),
               (0, b"kata-analyze 5\n"), (0.5, b"\x00\x01\x02\n"), (0, b"name\n"), (0, b"quit\n")]
    out = run_session(engine, script)
    assert "\n= jaxgo\n\n" in out and out.endswith("\n\n")


@pytest.mark.slow
def test_local_engine_streams_lz_analyze_on_an_in_process_analysis_engine():
    # The local engine registers the analysis family too; its searches run on a private in-process engine.
    from jaxgo.server.client import LocalConnection

    connection = LocalConnection(AnalysisEngine(small_server_config()).start())
    engine = make_gtp_engine(Rules(size=5, komi=0.5), CHEAP, analysis=connection)
    assert "lz-analyze" in engine.commands() and "kata-genmove_analyze" in engine.commands()
    # 15 s: the first analysis compiles its kernels first (seconds on a loaded 2-core machine).
    out = run_session(engine, [(0, b"play b b2\n"), (0, b"lz-analyze w 10\n"), (15.0, b"quit\n")])
    response = out.split("\n\n")[1]
    head, *lines = response.splitlines()
    assert head == "=" and lines and all(line.startswith("info move ") for line in lines)
    assert all(" move B2 " not in line for line in lines)  # occupied point never suggested


# -- queries and responses without a server -------------------------------------------------------------------
class CannedStream:
    """A query's stream that answers the given responses, then nothing (queue.Empty)."""

    def __init__(self, responses):
        self.responses = list(responses)
        self.terminated = False

    def get(self, timeout=None):
        import queue

        if not self.responses:
            raise queue.Empty
        return self.responses.pop(0)

    def terminate(self):
        self.terminated = True


class CannedConnection:
    """Records every query and answers each with the same canned responses."""

    def __init__(self, responses):
        self.responses = responses
        self.queries = []

    def query(self, obj):
        self.queries.append(obj)
        return CannedStream(self.responses)

    def close(self):
        pass


def move_info(move, visits, winrate, pv):
    return {"move": move, "visits": visits, "winrate": winrate, "prior": 0.1, "lcb": winrate - 0.1,
            "utility": 2 * winrate - 1, "scoreLead": 0.0, "scoreMean": 0.0, "order": 0, "pv": pv}


def final(infos, visits):
    return {"id": "q", "turnNumber": 0, "isDuringSearch": False, "moveInfos": infos,
            "rootInfo": {"visits": visits, "winrate": infos[0]["winrate"] if infos else 0.5}}


def test_position_query_carries_every_search_option():
    from jaxgo.gtp.remote import position_query

    engine = make_gtp_engine(Rules(size=5, komi=0.5), CHEAP)
    engine.handle("play b c3")
    engine.handle("play w d4")
    game = engine.session.game
    query = position_query(game, -1, CHEAP, 100, interval=0.5)  # White again: Black's pass goes in between
    assert query["moves"] == [["B", "C3"], ["W", "D4"], ["B", "pass"]]
    assert query["overrideSettings"] == dict(CHEAP.to_dict(), reportAnalysisWinratesAs="SIDETOMOVE")
    assert (query["maxVisits"], query["reportDuringSearchEvery"], query["komi"]) == (100, 0.5, 0.5)
    random = position_query(game, 1, SearchConfig(strategy="random"), 10)  # no search strategy: analysed by RAVE
    assert random["overrideSettings"]["strategy"] == "rave"


def test_result_from_response_follows_the_best_move_info():
    import numpy as np

    from jaxgo.gtp.remote import result_from_response

    response = final([move_info("C3", 60, 0.7, ["C3", "D4"]), move_info("pass", 30, 0.4, ["pass"]),
                      move_info("B2", 10, 0.9, ["B2"])], 100)
    result = result_from_response(response, 5, seconds=1.5)
    assert (result.move, result.pv, result.playouts, result.seconds) == (12, [12, 8], 100, 1.5)
    assert result.win_rate == 0.7 and result.visits[25] == 30 and result.values[16] == 0.9
    assert np.isnan(result.values[0]) and result.visits.sum() == 100
    empty = result_from_response(final([], 0), 5)
    assert (empty.move, empty.pv) == (25, [25])


def test_analysis_commands_send_the_session_config_and_genmove_analyze_decides_like_genmove():
    config = SearchConfig(playout_policy="light", bias_c2=0.5, resign_min_playouts=50)
    connection = CannedConnection([final([move_info("B2", 80, 0.6, ["B2", "C3"])], 80)])
    engine = make_gtp_engine(Rules(size=5, komi=0.5), config, playouts=80, analysis=connection)
    out = run_session(engine, [(0, b"kata-analyze 10\n"), (0.2, b"lz-genmove_analyze b 10\n"), (0, b"quit\n")])
    assert all(q["overrideSettings"] == dict(config.to_dict(), reportAnalysisWinratesAs="SIDETOMOVE")
               for q in connection.queries) and len(connection.queries) == 2
    assert connection.queries[1]["maxVisits"] == 80  # the Player's budget
    assert out.split("\n\n")[1].splitlines()[-1] == "play B2"  # the PV's first move, played
    assert engine.session.game.moves == [(1, 16)]
    assert engine.session.player.last_result.pv == [16, 12]
    connection.responses = [final([move_info("C3", 60, 0.03, ["C3"])], 60)]  # lost: below the threshold
    out = run_session(engine, [(0, b"lz-genmove_analyze w\n"), (0, b"quit\n")])
    assert out.split("\n\n")[0].splitlines()[-1] == "play resign"
    assert len(engine.session.game.moves) == 1
