"""``GtpSession``: the state one GTP connection works on, handed to every command handler, made of parts
with one job each:

    state     ``GameState``: the rules and the game (an ``EarlyGame`` until the rule kernels are compiled);
    players   ``PlayerSlot``: the ``Player`` that chooses moves, its ``SearchConfig`` (the session's ``config``;
              ``set_search_config`` changes it), its move budget and the GTP clock (``clock``);
    analysis  ``AnalysisLink``: the connection to an analysis engine (the ``jaxgo serve`` process of
              ``jaxgo gtp --server``, else a private in-process one created by ``connection()`` and stopped by
              ``close``: without a connection given, live analysis searches the Player's own tree instead,
              ``jaxgo.gtp.tree_analysis``), the stream a live-analysis handler leaves for the read loop
              (``jaxgo.gtp.loop``) and the last analysis report;
    ponder    ``Ponder``: the search on the opponent's time after a genmove;
    warmup    ``jaxgo.gtp.warmup.Warmup``: compiling ahead in a background thread (``start_warmup``);

beside the debug log, the quit flag, the command names and the read loop's interrupt check.  ``game``,
``rules``, ``size``, ``player``, ``config`` and ``clock`` are the parts' values under the names every handler
uses.

The route of one genmove (``jaxgo.gtp.play``): ``session.player_after_warmup()`` waits until the warm-up has
compiled the search, then gives the Player (built on first use by the engine's ``make_player``: one searching
in this process, or over ``RemoteSearch`` on a server); ``Player.choose(session.game, colour)`` runs the search
within its budget and picks the move, which the handler plays on ``session.game``.

Nothing here imports JAX until a command needs it: the game and the Player are created on first use.  With
``quick_start`` (``jaxgo gtp``), moves played before the game exists go to a plain-Python ``EarlyGame``
(``jaxgo.gtp.early``) and are replayed on the real game once the warm-up thread (``jaxgo.gtp.warmup``) has
compiled its kernels, so a GUI's first ``play`` is answered at once.
"""

from __future__ import annotations

import dataclasses
import threading

from jaxgo.go.config import Rules
from jaxgo.gtp.early import EarlyGame
from jaxgo.search.config import SearchConfig
from jaxgo.search.timecontrol import Clock

CLOSE_TIMEOUT = 2.0  # seconds to wait for the analysis engine's device thread at the end
WARMUP_JOIN_TIMEOUT = 0.5  # ... and for the warm-up (a compilation cannot be stopped; ``jaxgo gtp`` then exits
# without waiting for it, see ``jaxgo.gtp.cli.end_process``)
CLOCK_READY_TIMEOUT = 60.0  # at most this long a clock command waits for the search to be compiled


def replace_search_config(search, config: SearchConfig) -> None:
    """Give a Player's search a new config and drop its tree; a search with ``set_config`` validates it first
    (``RemoteSearch`` refuses flat strategies with ValueError)."""
    setter = getattr(search, "set_config", None)
    if setter is not None:
        setter(config)
    else:
        search.config = config
    search.reset()


class GameState:
    """The rules and the game of a session: the real ``jaxgo.go.game.Game`` created on first use, before it
    (with ``quick_start``, until the warm-up has compiled the rule kernels) an ``EarlyGame``."""

    def __init__(self, rules: Rules, quick_start: bool = False):
        self.rules = rules
        self.quick_start = quick_start
        self.warmup = None  # the session's Warmup: the real game waits for its rule kernels
        self._game = None
        self._early: EarlyGame | None = None
        self._lock = threading.RLock()

    @property
    def game(self):
        """The current ``jaxgo.go.game.Game``, created on first use (the early moves replayed on it)."""
        if self._game is None:
            with self._lock:
                if self._game is None:
                    self._game = self._build_game()
        return self._game

    @game.setter
    def game(self, value) -> None:
        self._game = value
        self._early = None
        self.rules = value.rules

    def _build_game(self):
        if self.warmup is not None:
            self.warmup.wait("rules")
        from jaxgo.go.game import Game

        game = Game(self.rules)
        early, self._early = self._early, None
        for colour, move in early.moves if early is not None else ():
            game.play(colour, move)
        return game

    def _early_game(self) -> EarlyGame | None:
        """The EarlyGame to play on, or None once the real game is (or can cheaply be) used."""
        if self._game is not None or not self.quick_start:
            return None
        if self.warmup is not None and self.warmup.done("rules"):
            return None  # the rule kernels are compiled: switch to the real game now
        if self._early is None:
            self._early = EarlyGame(self.rules)
        return self._early

    def play(self, colour: int, move: int) -> str | None:
        """Play a move; None, or why it is illegal (nothing changes then)."""
        early = self._early_game()
        if early is not None:
            return early.play(colour, move)
        from jaxgo.go.game import IllegalMove

        try:
            self.game.play(colour, move)
        except IllegalMove as exc:
            return exc.reason
        return None

    def undo(self) -> bool:
        """Take back the last move (setup stones stay); False when there is no move to take back."""
        early = self._early_game()
        if early is not None:
            return early.undo()
        game = self.game
        if not game.moves:
            return False
        try:
            game.undo()
        except IndexError:
            return False
        return True

    def set_rules(self, **changes) -> None:
        """Change komi / ko rule / suicide in place, keeping the position and its history."""
        self.rules = dataclasses.replace(self.rules, **changes)
        for game in (self._game, self._early):
            if game is not None:
                game.rules = self.rules

    def clear(self) -> None:
        """An empty board, same rules."""
        for game in (self._game, self._early):
            if game is not None:
                game.clear()

    def new_board(self, size: int) -> None:
        """An empty board of ``size`` (ValueError for a size the rules do not allow)."""
        self.rules = dataclasses.replace(self.rules, size=size)
        self._game = None
        self._early = None


class PlayerSlot:
    """The session's ``Player`` (``player``, built on first use by ``make``, default one searching in this
    process with ``config``), its search options and move budget before it exists, and the GTP clock it
    spends."""

    def __init__(self, player=None, make=None, config: SearchConfig | None = None, budget: tuple = (None, None),
                 log=None):
        self.built = player  # the Player once it exists, else None
        self.make = make
        self.budget_before = budget  # (playouts, seconds) per move the Player will get
        self._config = player.config if player is not None else (config or SearchConfig())
        self.clock = player.clock if player is not None else Clock()  # the Player's clock (time commands)
        self.log = log
        self._lock = threading.RLock()

    @property
    def player(self):
        """The ``Player`` (created on first use)."""
        if self.built is None:
            with self._lock:
                if self.built is None:
                    self.built = self._new_player()
        return self.built

    def _new_player(self):
        if self.make is not None:
            player = self.make()
        else:
            from jaxgo.search.player import Player

            player = Player(self._config, log=self.log)
        if player.config != self._config:  # a search option was set before the Player existed
            replace_search_config(player.search, self._config)
        player.clock = self.clock
        return player

    @property
    def budget(self) -> tuple:
        """(playouts, seconds) per move (None: not fixed; the GTP clock decides), without creating the Player
        (which loads JAX) when it does not exist yet."""
        if self.built is not None:
            return self.built.playouts, self.built.seconds
        return self.budget_before

    @property
    def config(self) -> SearchConfig:
        """The effective search configuration (the Player's)."""
        return self.built.config if self.built is not None else self._config

    def set_config(self, config: SearchConfig) -> None:
        """Search with ``config`` from the next search on (the tree is dropped); ValueError if the Player's
        search cannot run it."""
        with self._lock:
            if self.built is not None:
                replace_search_config(self.built.search, config)
            self._config = config

    def reset(self) -> None:
        """A new game: the Player forgets its search tree (nothing to do before it exists)."""
        if self.built is not None:
            self.built.reset()


class AnalysisLink:
    """Live analysis: the connection to an analysis engine, the stream a handler leaves for the read loop, and
    the last analysis report (newer than any genmove: ``jaxgo-search_stats``)."""

    def __init__(self, connection=None):
        self.client = connection  # ServerClient / LocalConnection, or None until connection()
        self.given = connection is not None  # live analysis searches there, not on the Player's tree
        self.owned = False  # the in-process engine is this session's: close stops it
        self.stream = None  # an AnalysisStream left by a live-analysis handler for the read loop
        self.last = None  # (SearchResult, its kind) of the last analysis report

    def connection(self):
        """The analysis connection: the server's, else a private in-process analysis engine."""
        if self.client is None:
            from jaxgo.server.client import LocalConnection

            self.client = LocalConnection()
            self.owned = True
        return self.client

    def close(self) -> None:
        """Close the connection; stop the in-process analysis engine this session started (its device thread
        ends; queued searches are dropped; a later session on the same engine starts a new one)."""
        if self.client is None:
            return
        self.client.close()
        engine = getattr(self.client, "engine", None)
        if self.owned:
            if engine is not None:
                engine.stop(wait=False, timeout=CLOSE_TIMEOUT)
            self.client, self.owned = None, False


class Ponder:
    """Thinking on the opponent's time: after a genmove (``requested``), when ``enabled``, a search of the
    opponent's position in a background thread until ``stop`` (the next command)."""

    def __init__(self, enabled: bool = False, debug=None):
        self.enabled = enabled
        self.requested = False  # set by genmove; the read loop starts pondering after the reply
        self._debug = debug or (lambda text: None)
        self._running: tuple[threading.Thread, threading.Event] | None = None

    def start(self, player, game_of) -> bool:
        """If enabled and requested, and the Player exists (``player`` not None): ponder on ``game_of()``.
        Whether a ponder search started."""
        requested, self.requested = self.requested, False
        if not (self.enabled and requested) or player is None or self._running is not None:
            return False
        stop = threading.Event()
        game = game_of()

        def run():
            try:
                result = player.ponder(game, stop.is_set)
                if result is not None:
                    self._debug(f"pondered: {result.playouts} playouts in {result.seconds:.2f} s")
            except Exception as exc:  # noqa: BLE001 - a failed ponder must not end the session
                self._debug(f"pondering failed: {exc!r}")

        thread = threading.Thread(target=run, daemon=True, name="gtp-ponder")
        self._running = (thread, stop)
        thread.start()
        return True

    def stop(self) -> None:
        """End the ponder search (its tree stays for the next genmove) and wait for it."""
        if self._running is not None:
            thread, stop = self._running
            stop.set()
            thread.join()
            self._running = None


class GtpSession:
    """One GTP session: its parts (``state``, ``players``, ``analysis``, ``ponder``, ``warmup``), log, quit flag,
    command names and interrupt check."""

    def __init__(self, rules: Rules | None = None, player=None, log=None, analysis=None, *,
                 make_player=None, config: SearchConfig | None = None, quick_start: bool = False,
                 ponder: bool = False, budget: tuple = (None, None)):
        """``player``: a ready ``Player``; else ``make_player()`` builds one on first use (default: a Player
        searching in this process with ``config``; ``budget`` = the (playouts, seconds) per move it will get)."""
        self.log = log  # a text stream for debug output (stderr in ``jaxgo gtp``), or None
        self.state = GameState(rules if rules is not None else Rules(), quick_start)
        self.players = PlayerSlot(player, make_player, config, budget, log)
        self.analysis = AnalysisLink(analysis)
        self.ponder = Ponder(ponder, self.debug)
        self.warmup = None  # jaxgo.gtp.warmup.Warmup once start_warmup() ran
        self.quit = False
        self.command_names: tuple[str, ...] = ()  # set by the Dispatcher: what list_commands answers
        self.interrupt_check = None  # set by the read loop: () -> bool, True once "# interrupt" arrived

    # -- the parts' values under the handlers' names ----------------------------------------------------------
    @property
    def game(self):
        return self.state.game

    @game.setter
    def game(self, value) -> None:
        self.state.game = value

    @property
    def rules(self) -> Rules:
        return self.state.rules

    @property
    def size(self) -> int:
        return self.state.rules.size

    @property
    def player(self):
        return self.players.player

    @property
    def config(self) -> SearchConfig:
        return self.players.config

    @property
    def budget(self) -> tuple:
        return self.players.budget

    @property
    def clock(self) -> Clock:
        return self.players.clock

    # -- game -------------------------------------------------------------------------------------------------
    def play(self, colour: int, move: int) -> str | None:
        """Play a move; None, or why it is illegal (nothing changes then)."""
        return self.state.play(colour, move)

    def undo(self) -> bool:
        return self.state.undo()

    def set_rules(self, **changes) -> None:
        self.state.set_rules(**changes)

    def clear_board(self) -> None:
        """An empty board (same rules), a new game for the player."""
        self.state.clear()
        self.reset_search()

    def new_board(self, size: int) -> None:
        """An empty board of ``size`` (ValueError for a size the rules do not allow), a new game for the
        player."""
        self.state.new_board(size)
        self.reset_search()

    # -- player and search options ----------------------------------------------------------------------------
    def reset_search(self) -> None:
        self.players.reset()

    def player_after_warmup(self):
        """The Player, once the warm-up compiled its search: every command that searches (genmove, final_score,
        ownership, genmove_analyze) takes it from here."""
        if self.warmup is not None:
            self.warmup.wait("search")
        return self.players.player

    def set_search_config(self, config: SearchConfig) -> None:
        self.players.set_config(config)

    # -- services ---------------------------------------------------------------------------------------------
    def debug(self, text: str) -> None:
        if self.log is not None:
            print(text, file=self.log, flush=True)

    def interrupted(self) -> bool:
        """Whether the client asked to interrupt the running command (GoGui's ``# interrupt`` line)."""
        return bool(self.interrupt_check is not None and self.interrupt_check())

    def ready_for_clock(self) -> None:
        """A game on a clock is about to start (``time_settings``): wait for the warm-up to compile the search
        (at most ``CLOCK_READY_TIMEOUT`` s), then compile the batch shape the clock's first move will use (the
        warm-up may have compiled the one of another budget) and the ownership estimate a move after a pass
        needs (``Player.passing_wins``), and keep that K for every search on a time budget,
        so that no move's time goes to compiling.  The clock command answers after this, before the referee's
        clock runs."""
        if self.warmup is None:
            return
        self.warmup.wait("search", CLOCK_READY_TIMEOUT)
        if self.warmup.error is not None or self.warmup.cancelled.is_set():
            return
        try:
            leaves = self.warmup.compile_search()
            if leaves is None:
                return  # no local tree search (a flat strategy, or searches on a server)
            self.warmup.compile_ownership()
        except Exception as exc:  # compiling ahead only saves time: the first search compiles what it needs
            self.debug(f"clock: compiling ahead failed: {exc!r}")
            return
        self.player.clock.leaves = leaves  # every search on this clock uses the compiled K

    def start_warmup(self):
        """Start compiling ahead in a background thread (``jaxgo.gtp.warmup``)."""
        from jaxgo.gtp.warmup import Warmup

        self.warmup = self.state.warmup = Warmup(self).start()
        return self.warmup

    def start_pondering(self) -> bool:
        """After a genmove that asked for it, when pondering is on: ponder (``Ponder.start``) on the game."""
        return self.ponder.start(self.players.built, lambda: self.state.game)

    def close(self) -> None:
        """End of the session: stop pondering, the warm-up, and the analysis link (``AnalysisLink.close``)."""
        self.ponder.stop()
        if self.warmup is not None:
            self.warmup.cancel()
        self.analysis.close()
        if self.warmup is not None:
            self.warmup.join(WARMUP_JOIN_TIMEOUT)
