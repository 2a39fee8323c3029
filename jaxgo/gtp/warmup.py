"""Compile ahead: a background thread that loads JAX and compiles what the first commands will need.

``jaxgo gtp`` answers its first commands (``name``, ``list_commands``, ``boardsize``, ``play`` ...) without JAX
(``jaxgo.gtp.early``) while this thread, started at once, imports JAX and compiles, in order:

    rules    the rule kernels of ``jaxgo.go.game.Game`` for the session's board size (play, legality,
             superko hashes, score); then the session replays its early moves on a real ``Game``;
    search   the session's ``Player`` and one batch of its first search (a throw-away ``Searcher`` with the
             same ``SearchConfig`` and the batch size K the first ``genmove`` will use, and with its
             ``late_playout_policy`` when the searches switch to it later in the game), so the first ``genmove``
             (and the first late one) finds its kernels compiled (or in the persistent cache,
             ``jaxgo.util.jitcache``).

The session's own searcher, game and random keys are never touched: a seeded engine plays the same moves
with or without the warm-up.  Commands that need a phase wait for it (``wait``); ``cancel`` stops the thread
between steps (a compilation in progress runs to its end).  ``seconds`` records each phase's duration.
"""

from __future__ import annotations

import dataclasses
import threading
import time

PHASES = ("rules", "search")


class Warmup:
    """The warm-up thread of one ``GtpSession`` (see the module docstring)."""

    def __init__(self, session):
        self.session = session
        self.cancelled = threading.Event()
        self.ready = {phase: threading.Event() for phase in PHASES}
        self.seconds: dict[str, float] = {}
        self.compiled: set = set()  # (rules, config, K) of compile_search, ("ownership", rules, config)
        self.error: str | None = None
        self.thread = threading.Thread(target=self.run, name="gtp-warmup", daemon=True)

    def start(self) -> "Warmup":
        self.thread.start()
        return self

    def in_warmup_thread(self) -> bool:
        return threading.current_thread() is self.thread

    def wait(self, phase: str, timeout: float | None = None) -> bool:
        """Wait until ``phase`` is done (or failed, or cancelled); immediately from the warm-up thread itself."""
        if self.in_warmup_thread():
            return self.ready[phase].is_set()
        return self.ready[phase].wait(timeout)

    def done(self, phase: str) -> bool:
        return self.ready[phase].is_set()

    def cancel(self) -> None:
        self.cancelled.set()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the thread to end; whether it did within ``timeout``."""
        if self.thread.is_alive() and not self.in_warmup_thread():
            self.thread.join(timeout)
        return not self.thread.is_alive()

    def run(self) -> None:
        try:
            for phase, step in (("rules", self.compile_rules), ("search", self.compile_search)):
                if self.cancelled.is_set():
                    break
                start = time.perf_counter()
                step()
                self.seconds[phase] = time.perf_counter() - start
                self.ready[phase].set()
                self.session.debug(f"warm-up: {phase} ready in {self.seconds[phase]:.2f} s")
        except Exception as exc:  # a failed warm-up only costs time later: the commands compile what they need
            self.error = repr(exc)
            self.session.debug(f"warm-up failed: {exc!r}")
        finally:
            for event in self.ready.values():
                event.set()

    def compile_rules(self) -> None:
        """Rule kernels for the session's board: a move, legal moves with superko hashes, the score."""
        from jaxgo.go.game import Game

        rules = self.session.rules
        game = Game(rules)
        game.play(1, (rules.size // 2) * rules.size + rules.size // 2)
        game.legal_moves(-1)
        game.score()

    def compile_search(self) -> int | None:
        """The Player, and one leaf batch of the first search with its batch size K (local tree searches only);
        the batch is not run again when that shape (rules, config, K) was compiled here before.  Returns K, or
        None when there is no local tree search to compile."""
        from jaxgo.search.config import TREE_STRATEGIES

        player = self.session.player
        config = player.config
        if config.strategy not in TREE_STRATEGIES or not hasattr(player.search, "searcher"):
            return None  # no search to compile here (random / flat strategies, or searches on a server)
        from jaxgo.go.game import Game
        from jaxgo.search.budget import first_batch_size
        from jaxgo.search.limits import SearchLimits
        from jaxgo.search.searcher import Searcher

        rules = self.session.rules
        game = Game(rules)
        leaves = first_batch_size(config, *player.budget(game, game.to_play), game.size)
        shape = (rules, config, leaves)
        if shape not in self.compiled:
            searcher = Searcher(rules, dataclasses.replace(config, leaves_per_batch=leaves), seed=0)
            searcher.search(game, SearchLimits(playouts=1))  # at least one batch of K leaves, L playouts each
            # and the playouts the searches switch to later in the game (on 19x19 they run from the start)
            late = config.late_playout_policy
            if late and config.playout_policy_at(0, rules.size ** 2) != late:
                late_config = dataclasses.replace(config, leaves_per_batch=leaves, playout_policy=late,
                                                  late_playout_policy=None)
                Searcher(rules, late_config, seed=0).search(game, SearchLimits(playouts=1))
            self.compiled.add(shape)
        return leaves

    def compile_ownership(self) -> None:
        """The Player's ownership estimate on the session's board (what ``passing_wins``, ``final_score`` and
        ``final_status_list`` run), once per rules and config: after an opponent's pass a move on a clock
        asks for it before its search."""
        player = self.session.player
        key = ("ownership", self.session.rules, player.config)
        if key in self.compiled:
            return
        from jaxgo.go.game import Game

        player.ownership(Game(self.session.rules))
        self.compiled.add(key)


__all__ = ["Warmup", "PHASES"]
