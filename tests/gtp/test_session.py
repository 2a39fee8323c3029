"""``GtpSession``: a few parts with one job each (game state, player and clock, analysis link, ponder,
warm-up) instead of one object holding everything."""

from jaxgo.go.config import Rules
from jaxgo.gtp.engine import make_gtp_engine
from jaxgo.gtp.session import AnalysisLink, GameState, GtpSession, PlayerSlot, Ponder
from jaxgo.search.config import SearchConfig


def test_a_session_holds_at_most_twelve_attributes_and_its_parts():
    """Issue 60: the session had 21 attributes (rules, game, early game, player, clock, warm-up, ponder thread,
    analysis connection, interrupt flag ...)."""
    session = make_gtp_engine(Rules(size=5), SearchConfig(playout_policy="light"), quick_start=True,
                              ponder=True).session
    assert len(vars(session)) <= 12, sorted(vars(session))
    assert len(vars(GtpSession())) == len(vars(session))
    assert isinstance(session.state, GameState) and isinstance(session.players, PlayerSlot)
    assert isinstance(session.analysis, AnalysisLink) and isinstance(session.ponder, Ponder)
    assert session.ponder.enabled and session.state.quick_start


def test_the_parts_values_under_the_handlers_names_without_jax():
    session = GtpSession(Rules(size=7), config=SearchConfig(uct_c=0.5), budget=(100, None))
    assert (session.size, session.rules.size, session.config.uct_c, session.budget) == (7, 7, 0.5, (100, None))
    assert session.players.built is None  # nothing built: no Player, no game
    session.set_search_config(SearchConfig(uct_c=0.25))
    session.set_rules(komi=0.5)
    assert session.config.uct_c == 0.25 and session.rules.komi == 0.5
    assert session.clock is session.players.clock


def test_pondering_starts_only_after_a_genmove_asked_for_it_and_with_a_player():
    class Recorder:
        def __init__(self):
            self.games = []

        def ponder(self, game, stop):
            self.games.append(game)

    ponder, player = Ponder(enabled=True), Recorder()
    assert not ponder.start(player, lambda: "game")  # not requested
    ponder.requested = True
    assert not ponder.start(None, lambda: "game") and not ponder.requested  # no Player yet: the request is dropped
    ponder.requested = True
    assert ponder.start(player, lambda: "game")
    ponder.stop()
    assert player.games == ["game"]
    off = Ponder(enabled=False)
    off.requested = True
    assert not off.start(player, lambda: "game")


def test_the_early_game_plays_before_the_real_one_and_is_replayed_on_it():
    state = GameState(Rules(size=5), quick_start=True)
    assert state.play(1, 12) is None and state.play(-1, 12) is not None  # the point is taken
    assert state.undo() and state.play(1, 6) is None
    game = state.game  # the real game, the early move replayed
    assert game.moves == [(1, 6)] and state.play(-1, 6) is not None
