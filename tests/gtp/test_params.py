"""Search options over GTP (``jaxgo.gtp.params`` and ``jaxgo.gtp.settings``): kata-list_params / kata-get_param /
kata-set_param and GoGui's parameter command ``jaxgo-search_config KEY VALUE`` give the session's Player a new
SearchConfig (checked by ``SearchConfig.with_overrides``), bounded against values that would exhaust memory."""

from __future__ import annotations

import queue

import pytest

from jaxgo.go.config import Rules
from jaxgo.gtp.engine import make_gtp_engine, make_remote_gtp_engine
from jaxgo.search.config import SearchConfig


def ask(engine, line: str) -> str:
    response = engine.handle(line)
    assert response.startswith("=") and response.endswith("\n\n"), response
    return response[2:-2]


def fail(engine, line: str) -> str:
    response = engine.handle(line)
    assert response.startswith("?") and response.endswith("\n\n"), response
    assert "internal error" not in response
    return response[2:-2]


@pytest.fixture
def engine():
    return make_gtp_engine(Rules(size=5), SearchConfig(playout_policy="light", bias_c2=0.0))


def test_list_and_get_every_search_option(engine):
    names = ask(engine, "kata-list_params").split()
    assert names[:len(SearchConfig().to_dict())] == list(SearchConfig().to_dict())
    assert {"maxPlayouts", "maxVisits", "maxTime"} <= set(names)
    assert ask(engine, "kata-get_param uct_c") == "0.7" and ask(engine, "kata-get_param gammas") == "none"
    assert ask(engine, "kata-get_param playouts") == "light"  # SearchConfig.playouts: the playout policy
    assert fail(engine, "kata-get_param no_such_option") == "unknown parameter no_such_option"


def test_set_param_gives_the_player_a_new_config_before_and_after_it_exists(engine):
    assert ask(engine, "kata-set_param uct_c 0.5") == ""  # before the Player exists: no JAX needed
    assert engine.session.config.uct_c == 0.5
    assert engine.session.player.config.uct_c == 0.5  # the Player created afterwards has it
    assert ask(engine, "kata-set_param strategy uct") == "" and engine.session.player.config.strategy == "uct"
    assert ask(engine, "jaxgo-search_config rave_c1 0.1") == ""  # GoGui's parameter dialog
    assert "[string] rave_c1 0.1" in ask(engine, "jaxgo-search_config").splitlines()
    assert ask(engine, "kata-set_param gammas none") == "" and engine.session.config.gammas is None
    config = engine.session.config
    assert (config.uct_c, config.strategy, config.rave_c1, config.playout_policy) == (0.5, "uct", 0.1, "light")


def test_board_size_defaults_show_as_none_and_come_back_with_auto(engine):
    assert ask(engine, "kata-get_param prior_pattern") == "none"  # by board size: 20, and 500 on 19x19
    assert ask(engine, "kata-set_param prior_pattern 50") == "" and engine.session.config.prior_pattern == 50.0
    assert ask(engine, "kata-set_param widen_playouts 0") == "" and engine.session.config.widen_playouts == 0.0
    assert ask(engine, "kata-set_param prior_pattern auto") == "" and engine.session.config.prior_pattern is None
    assert ask(engine, "jaxgo-search_config widen_playouts none") == ""
    assert engine.session.config.widen_playouts is None
    assert "widen_playouts" in fail(engine, "kata-set_param widen_playouts -5")


@pytest.mark.parametrize("line, message", [
    ("kata-set_param strategy bogus", "unknown strategy"),
    ("kata-set_param uct_c abc", "uct_c"),
    ("kata-set_param uct_c nan", "uct_c"),
    ("kata-set_param playouts_per_leaf 1000000000", "playouts_per_leaf: at most 256"),
    ("kata-set_param leaves_per_batch 0", "leaves_per_batch"),
    ("kata-set_param gammas /dev/zero", "gammas"),
    ("kata-set_param gammas /no/such/file.npz", "gammas: cannot read"),
    ("kata-set_param maxTime 0", "maxTime"),
    ("kata-set_param maxPlayouts 0", "maxPlayouts"),
    ("kata-set_param maxPlayouts 2.5", "maxPlayouts"),
    ("kata-set_param no_such 1", "unknown parameter"),
    ("kata-set_param uct_c", "syntax error"),
    ("kata-set_param uct_c -1", "uct_c: -1 is out of range"),  # issue 47: nonsense values
    ("kata-set_param n_expand 0", "n_expand: 0 is out of range"),
    ("kata-set_param early_stop no", "early_stop: expected true, false, 1 or 0"),
    ("jaxgo-search_config resign_threshold 1.5", "resign_threshold"),
    ("jaxgo-search_config bias_c2 -3", "bias_c2"),
])
def test_bad_values_are_refused_and_change_nothing(engine, line, message):
    before = engine.session.config
    assert message in fail(engine, line)
    assert engine.session.config == before


def test_move_budget_parameters(engine):
    assert ask(engine, "kata-set_param maxVisits 200") == "" and engine.session.player.playouts == 200
    assert ask(engine, "kata-get_param maxPlayouts") == "200"
    assert ask(engine, "kata-set_param maxTime 2.5") == "" and engine.session.player.seconds == 2.5
    assert ask(engine, "kata-set_param maxPlayouts none") == "" and engine.session.player.playouts is None


class RecordingConnection:
    """An analysis connection that records queries and answers none of them."""

    def __init__(self):
        self.queries = []

    def query(self, obj):
        self.queries.append(obj)

        class Silent:
            def get(self, timeout=None):
                raise queue.Empty

            def terminate(self):
                pass

        return Silent()

    def close(self):
        pass


def test_the_server_front_end_refuses_flat_strategies_and_sends_the_new_config():
    connection = RecordingConnection()
    engine = make_remote_gtp_engine(connection, Rules(size=5), SearchConfig(playout_policy="light"))
    assert "tree searches only" in fail(engine, "kata-set_param strategy mc")
    assert engine.session.config.strategy == "rave"
    assert ask(engine, "kata-set_param uct_c 0.25") == ""
    assert engine.session.player.search.config.uct_c == 0.25  # the next query's overrideSettings carry it


def test_switches_take_gogui_bool_values(engine):
    assert ask(engine, "kata-set_param early_stop 0") == "" and engine.session.config.early_stop is False
    assert ask(engine, "jaxgo-search_config early_stop true") == "" and engine.session.config.early_stop is True


def test_a_regular_file_that_is_not_a_gamma_file_is_refused_and_the_engine_plays_on(tmp_path):
    """Issue 47: ``kata-set_param gammas /etc/passwd`` was accepted, then every genmove answered ``? internal
    error: ...pickled (object) data``.  Now the file is read when set and refused; the old gammas stay.  The
    engine is the one ``jaxgo gtp --size 5 --playouts 32`` builds (its CLI's ``engine_from_args``), served in
    this process on a thread (a FIFO that blocked it would fail the test, not hang the run)."""
    import io
    import os
    import threading

    from jaxgo.gtp.cli import build_parser, engine_from_args
    from jaxgo.gtp.loop import serve

    text = tmp_path / "passwd"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n")
    fifo = tmp_path / "gammas.npz"
    os.mkfifo(fifo)
    script = (f"1 kata-set_param gammas {text}\n2 kata-set_param gammas {fifo}\n3 kata-get_param gammas\n"
              "4 genmove b\n5 quit\n")
    engine = engine_from_args(build_parser().parse_args(["--size", "5", "--playouts", "32", "--quiet"]))
    out = io.StringIO()
    thread = threading.Thread(target=serve, args=(engine, io.BytesIO(script.encode()), out), daemon=True)
    thread.start()
    thread.join(300)
    assert not thread.is_alive(), f"the session hung: {out.getvalue()!r}"
    replies = [block for block in out.getvalue().split("\n\n") if block]
    assert replies[0].startswith("?1 gammas:") and "is not a gamma file" in replies[0]
    assert replies[1].startswith("?2 gammas:") and "is not a gamma file" in replies[1]
    assert replies[2] == "=3 none"
    assert replies[3].startswith("=4 ") and "error" not in replies[3]
    assert replies[4] == "=5 "


def test_a_real_gamma_file_is_accepted(engine):
    from jaxgo.features.gammas import DEFAULT_PATH, load_checked

    assert load_checked(DEFAULT_PATH).compatible()
    assert ask(engine, f"kata-set_param gammas {DEFAULT_PATH}") == ""
    assert engine.session.config.gammas == str(DEFAULT_PATH)
