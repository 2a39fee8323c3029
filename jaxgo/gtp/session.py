"""``GtpSession``: the state one GTP connection works on, handed to every command handler.

It holds the rules, the game, the ``Player`` that chooses moves (its ``SearchConfig`` is the session's
``config``; ``set_search_option`` changes it), the GTP clock, the debug log, the quit flag, the analysis stream
a live-analysis handler leaves for the read loop (``jaxgo.gtp.loop``), and the connection to an analysis engine
(the ``jaxgo serve`` process of ``jaxgo gtp --server``, else a private in-process one created on first use by
``analysis_connection`` and stopped by ``close``).

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


class GtpSession:
    """One GTP session: rules, game, player, clock, log, quit flag, analysis stream and connection."""

    def __init__(self, rules: Rules | None = None, player=None, log=None, analysis=None, *,
                 make_player=None, config: SearchConfig | None = None, quick_start: bool = False,
                 ponder: bool = False, budget: tuple = (None, None)):
        """``player``: a ready ``Player``; else ``make_player()`` builds one on first use (default: a Player
        searching in this process with ``config``; ``budget`` = the (playouts, seconds) per move it will get)."""
        self.rules = rules if rules is not None else Rules()
        self.log = log  # a text stream for debug output (stderr in ``jaxgo gtp``), or None
        self._player = player
        self._make_player = make_player
        self._budget = budget
        self._config = player.config if player is not None else (config or SearchConfig())
        self.clock = player.clock if player is not None else Clock()  # the Player's clock (time commands)
        self.quit = False
        self.analysis = analysis  # ServerClient / LocalConnection, or None until analysis_connection()
        self._owns_analysis = False
        self.analysis_stream = None  # an AnalysisStream left by a live-analysis handler for the read loop
        self.last_analysis = None  # (SearchResult, its kind) of the last analysis report, newer than any genmove
        self.command_names: tuple[str, ...] = ()  # set by the Dispatcher: what list_commands answers
        self.quick_start = quick_start
        self.warmup = None  # jaxgo.gtp.warmup.Warmup once start_warmup() ran
        self.ponder = ponder  # think on the opponent's time after our genmove (``start_pondering``)
        self.ponder_requested = False  # set by genmove; the read loop starts pondering after the reply
        self._pondering: tuple[threading.Thread, threading.Event] | None = None
        self.interrupt_check = None  # set by the read loop: () -> bool, True once "# interrupt" arrived
        self._game = None
        self._early: EarlyGame | None = None
        self._lock = threading.RLock()

    # -- game -------------------------------------------------------------------------------------------------
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

    @property
    def size(self) -> int:
        return self.rules.size

    def set_rules(self, **changes) -> None:
        """Change komi / ko rule / suicide in place, keeping the position and its history."""
        self.rules = dataclasses.replace(self.rules, **changes)
        for game in (self._game, self._early):
            if game is not None:
                game.rules = self.rules

    def clear_board(self) -> None:
        """An empty board (same rules), a new game for the player."""
        for game in (self._game, self._early):
            if game is not None:
                game.clear()
        self.reset_search()

    def new_board(self, size: int) -> None:
        """An empty board of ``size`` (ValueError for a size the rules do not allow)."""
        self.rules = dataclasses.replace(self.rules, size=size)
        self._game = None
        self._early = None
        self.reset_search()

    # -- player and search options ----------------------------------------------------------------------------
    @property
    def player(self):
        """The ``Player`` (created on first use)."""
        if self._player is None:
            with self._lock:
                if self._player is None:
                    self._player = self._new_player()
        return self._player

    @property
    def budget(self) -> tuple:
        """(playouts, seconds) per move (None: not fixed; the GTP clock decides), without creating the Player
        (which loads JAX) when it does not exist yet."""
        if self._player is not None:
            return self._player.playouts, self._player.seconds
        return self._budget

    def _new_player(self):
        if self._make_player is not None:
            player = self._make_player()
        else:
            from jaxgo.search.player import Player

            player = Player(self._config, log=self.log)
        if player.config != self._config:  # a search option was set before the Player existed
            replace_search_config(player.search, self._config)
        player.clock = self.clock
        return player

    def reset_search(self) -> None:
        """A new game: the Player forgets its search tree (nothing to do before it exists)."""
        if self._player is not None:
            self._player.reset()

    def search_player(self):
        """The Player, once the warm-up compiled its search (commands that search call this)."""
        if self.warmup is not None:
            self.warmup.wait("search")
        return self.player

    @property
    def config(self) -> SearchConfig:
        """The effective search configuration (the Player's)."""
        return self._player.config if self._player is not None else self._config

    def set_search_config(self, config: SearchConfig) -> None:
        """Search with ``config`` from the next search on (the tree is dropped); ValueError if the Player's
        search cannot run it."""
        with self._lock:
            if self._player is not None:
                replace_search_config(self._player.search, config)
            self._config = config

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

        self.warmup = Warmup(self).start()
        return self.warmup

    def analysis_connection(self):
        """The analysis connection: the server's, else a private in-process analysis engine."""
        if self.analysis is None:
            from jaxgo.server.client import LocalConnection

            self.analysis = LocalConnection()
            self._owns_analysis = True
        return self.analysis

    # -- pondering --------------------------------------------------------------------------------------------
    def start_pondering(self) -> bool:
        """If pondering is on and genmove asked for it: search the opponent's position in a background thread
        until ``stop_pondering`` (the next command; the read loop calls it before answering anything).  Whether
        a ponder search started."""
        requested, self.ponder_requested = self.ponder_requested, False
        if not (self.ponder and requested) or self._player is None or self._pondering is not None:
            return False
        stop = threading.Event()
        player, game = self._player, self.game

        def run():
            try:
                result = player.ponder(game, stop.is_set)
                if result is not None:
                    self.debug(f"pondered: {result.playouts} playouts in {result.seconds:.2f} s")
            except Exception as exc:  # noqa: BLE001 - a failed ponder must not end the session
                self.debug(f"pondering failed: {exc!r}")

        thread = threading.Thread(target=run, daemon=True, name="gtp-ponder")
        self._pondering = (thread, stop)
        thread.start()
        return True

    def stop_pondering(self) -> None:
        """End the ponder search (its tree stays for the next genmove) and wait for it."""
        if self._pondering is not None:
            thread, stop = self._pondering
            stop.set()
            thread.join()
            self._pondering = None

    def close(self) -> None:
        """End of the session: stop pondering, the warm-up, close the analysis connection and stop the in-process
        analysis engine this session started (its device thread ends; queued searches are dropped; a later
        session on the same engine starts a new one)."""
        self.stop_pondering()
        if self.warmup is not None:
            self.warmup.cancel()
        if self.analysis is not None:
            self.analysis.close()
            engine = getattr(self.analysis, "engine", None)
            if self._owns_analysis:
                if engine is not None:
                    engine.stop(wait=False, timeout=CLOSE_TIMEOUT)
                self.analysis, self._owns_analysis = None, False  # a later session starts a new one
        if self.warmup is not None:
            self.warmup.join(WARMUP_JOIN_TIMEOUT)
