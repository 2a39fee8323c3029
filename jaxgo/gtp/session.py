"""``GtpSession``: the state one GTP connection works on, handed to every command handler.

It holds the rules, the game (created on first use, so a rules-only session never imports JAX), the ``Player``
that chooses moves (its ``SearchConfig`` is the session's ``config``), the debug log, the quit flag, the
analysis stream a live-analysis handler leaves for the read loop (``jaxgo.gtp.loop``), and the connection to
an analysis engine (the ``jaxgo serve`` process of ``jaxgo gtp --server``, else a private in-process one
created on first use by ``analysis_connection``).
"""

from __future__ import annotations

import dataclasses

from jaxgo.go.config import Rules
from jaxgo.search.config import SearchConfig
from jaxgo.search.player import Player


class GtpSession:
    """One GTP session: rules, game, player, log, quit flag, analysis stream and connection."""

    def __init__(self, rules: Rules | None = None, player: Player | None = None, log=None, analysis=None):
        self.rules = rules if rules is not None else Rules()
        self.player = player if player is not None else Player(SearchConfig(), log=log)
        self.log = log  # a text stream for debug output (stderr in ``jaxgo gtp``), or None
        self.quit = False
        self.analysis = analysis  # ServerClient / LocalConnection, or None until analysis_connection()
        self.analysis_stream = None  # an AnalysisStream left by a live-analysis handler for the read loop
        self.command_names: tuple[str, ...] = ()  # set by the Dispatcher: what list_commands answers
        self._game = None

    # -- game -------------------------------------------------------------------------------------------------
    @property
    def game(self):
        """The current ``jaxgo.go.game.Game``, created on first use."""
        if self._game is None:
            from jaxgo.go.game import Game

            self._game = Game(self.rules)
        return self._game

    @game.setter
    def game(self, value) -> None:
        self._game = value
        self.rules = value.rules

    @property
    def size(self) -> int:
        return self.rules.size

    @property
    def config(self) -> SearchConfig:
        """The effective search configuration (the Player's)."""
        return self.player.config

    def set_rules(self, **changes) -> None:
        """Change komi / ko rule / suicide in place, keeping the position and its history."""
        self.rules = dataclasses.replace(self.rules, **changes)
        if self._game is not None:
            self._game.rules = self.rules

    def clear_board(self) -> None:
        """An empty board (same rules), a new game for the player."""
        if self._game is not None:
            self._game.clear()
        self.player.reset()

    def new_board(self, size: int) -> None:
        """An empty board of ``size`` (ValueError for a size the rules do not allow)."""
        self.rules = dataclasses.replace(self.rules, size=size)
        self._game = None
        self.player.reset()

    # -- services ---------------------------------------------------------------------------------------------
    def debug(self, text: str) -> None:
        if self.log is not None:
            print(text, file=self.log, flush=True)

    def analysis_connection(self):
        """The analysis connection: the server's, else a private in-process analysis engine."""
        if self.analysis is None:
            from jaxgo.server.client import LocalConnection

            self.analysis = LocalConnection()
        return self.analysis

    def close(self) -> None:
        """Close the analysis connection (end of the session)."""
        if self.analysis is not None:
            self.analysis.close()
