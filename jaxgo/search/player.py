"""The Player: one object that turns a search into moves for every front end (KataGo's AsyncBot).

A ``Player`` owns the move choice (the move played is the first move of the reported principal variation),
the pass and resign rules, the time control (``Clock``) and, through its search, tree reuse.  ``jaxgo gtp``,
``jaxgo gtp --server`` and the match tools play through it; they differ only in the search they inject:

    ``LocalSearch``   searches in this process (``searcher.Searcher``, tree kept between moves, and searched by
                      the live analysis of ``jaxgo gtp`` too: ``Player.tree_searcher``);
    a remote search   (``jaxgo.gtp.remote.RemoteSearch``) sends the same ``SearchConfig`` to ``jaxgo serve``.

A search is any object with ``config`` (its ``SearchConfig``), ``search(game, limits) -> SearchResult`` (the
``SearchLimits`` the Player builds for every move: budget, forbid_pass, stop check, the clock's batch size),
``ownership(game, playouts) -> float [size, size]`` and ``reset()``; a search that keeps its tree between moves
also has ``ponder(game, limits)`` (``Player.ponder``).

Rules, in order (``Player.choose``):
    1. no legal move but pass: pass;  strategy ``random``: a uniform legal move;
    2. after the opponent's pass, pass when ending the game now wins on a settled board (``passing_wins``): no
       chain unsettled (``unsettled_stones``) and the score with the dead stones removed wins;
    3. otherwise search; the move is the search's best action by ``tree.rank_actions`` = the PV's first move;
    4. resign when that move's win rate is below ``resign_threshold`` after at least ``resign_min_playouts``
       playouts (never for ``depth2``, whose min-of-means is biased low);
    5. cleanup (``kgs-genmove_cleanup``): no pass while the opponent has dead stones, never resign.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxgo.go.coords import point_to_gtp
from jaxgo.go.game import Game
from jaxgo.go.status import chains, stone_status
from jaxgo.playouts.evaluator import evaluator_for
from jaxgo.search.budget import first_batch_size
from jaxgo.search.config import TREE_STRATEGIES, SearchConfig
from jaxgo.search.limits import DEFAULT_PLAYOUTS, SearchLimits
from jaxgo.search.ownership import ownership_estimate
from jaxgo.search.result import SearchResult
from jaxgo.search.searcher import Searcher
from jaxgo.search.timecontrol import Clock
from jaxgo.search.tree import rank_actions

RESIGN = -1  # move code of a resignation
OWNERSHIP_PLAYOUTS = 256  # playouts of the ownership estimate behind dead stones and passing
SETTLED_OWNERSHIP = 0.5  # a chain is settled when its stones' mean ownership is beyond +-0.5 (either way)
PONDER_MOVES = 4  # pondering stops after this many moves' budgets (if the opponent has not moved by then)


def unsettled_stones(board: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """bool [P]: stones of the chains whose fate the playouts leave open: the mean ownership of the chain's
    stones, seen from its colour, lies within (-SETTLED_OWNERSHIP, SETTLED_OWNERSHIP).  board int [P],
    owner float [P] (+1 Black)."""
    board = np.asarray(board).reshape(-1)
    owner = np.asarray(owner, np.float64).reshape(-1)
    open_ = np.zeros(board.shape, bool)
    for members in chains(board):
        if abs(np.mean(owner[members])) < SETTLED_OWNERSHIP:
            open_[members] = True
    return open_


def judged_status(board: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """str [P]: ``jaxgo.go.status.stone_status``, except that an unsettled chain is never 'dead' (it is
    'alive': a group the playouts do not agree on is not removed from the count, as a referee would not)."""
    status = stone_status(board, owner)
    status[(status == "dead") & unsettled_stones(board, owner)] = "alive"
    return status


@dataclasses.dataclass
class Decision:
    move: int  # point, pass = P, or RESIGN
    reason: str  # "search", "only pass", "random", "passing wins", "resign"
    result: SearchResult | None = None  # the search behind it, if one ran


class LocalSearch:
    """Searches in this process with an ``searcher.Searcher`` per rules (recreated, tree dropped, when they
    change)."""

    def __init__(self, config: SearchConfig, seed: int = 0, log=None):
        self.config = config
        self.seed = seed
        self.log = log
        self._searcher = None

    def searcher(self, rules) -> Searcher:
        if self._searcher is None or self._searcher.rules != rules:
            self._searcher = Searcher(rules, self.config, seed=self.seed, log=self.log)
        return self._searcher

    def search(self, game, limits: SearchLimits) -> SearchResult:
        return self.searcher(game.rules).search(game, limits)

    def ponder(self, game, limits: SearchLimits) -> SearchResult:
        """Search the game's position (the opponent to move) within ``limits`` (until their stop check): the tree
        stays, and the next search reuses the subtree of the move the opponent plays."""
        return self.searcher(game.rules).search(game, limits)

    def ownership(self, game, playouts: int = OWNERSHIP_PLAYOUTS) -> np.ndarray:
        evaluator = evaluator_for(self.config, stones=game.state.stones)  # the position's playouts
        return ownership_estimate(game, playouts=playouts, seed=self.seed, evaluator=evaluator)

    def reset(self) -> None:
        self._searcher = None


class Player:
    """Moves for a game: ``choose(game, colour)``; the budget is ``playouts`` and/or ``seconds`` per move, else
    the clock (GTP time commands), else ``DEFAULT_PLAYOUTS``."""

    def __init__(self, config: SearchConfig | None = None, *, search=None, seed: int = 0, log=None,
                 playouts: int | None = None, seconds: float | None = None):
        self.search = search if search is not None else LocalSearch(config or SearchConfig(), seed, log)
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.log = log
        self.playouts = playouts
        self.seconds = seconds
        self.clock = Clock()
        self.last_result: SearchResult | None = None

    @property
    def config(self) -> SearchConfig:
        return self.search.config

    def debug(self, text: str) -> None:
        if self.log is not None:
            print(text, file=self.log, flush=True)

    def reset(self) -> None:
        """Forget the search tree (a new game)."""
        self.search.reset()

    def tree_searcher(self, game) -> Searcher | None:
        """The ``Searcher`` whose tree this Player's moves and pondering search and reuse (``LocalSearch``), for a
        caller that runs that tree's search steps itself: live analysis (``jaxgo.gtp.tree_analysis``) continues
        the tree genmove left, and genmove the one analysis left.  None when the search keeps no tree in this
        process (a remote search, a flat or random strategy)."""
        searcher = getattr(self.search, "searcher", None)
        if searcher is None or self.config.strategy not in TREE_STRATEGIES:
            return None
        return searcher(game.rules)

    # -- budget -----------------------------------------------------------------------------------------------
    def budget(self, game, colour: int) -> tuple[int | None, float | None]:
        """(playouts, seconds) for ``colour``'s next move: the fixed options, or a share of the clock."""
        if self.playouts is not None or self.seconds is not None:
            return self.playouts, self.seconds
        seconds = self.clock.move_seconds(colour, int(np.sum(game.board() == 0)))
        return (DEFAULT_PLAYOUTS, None) if seconds is None else (None, seconds)

    def limits(self, game, colour: int, forbid_pass: bool = False, stop=None, moves: int = 1) -> SearchLimits:
        """The limits of a search for ``colour``'s move: ``moves`` times its budget, ``forbid_pass``, the stop
        check ``stop`` (() -> bool) and the clock's batch size K for a search on a time budget."""
        playouts, seconds = self.budget(game, colour)
        return SearchLimits(playouts=playouts and moves * playouts, seconds=seconds and moves * seconds,
                            forbid_pass=forbid_pass, should_stop=stop,
                            timed_leaves=self.timed_leaves(playouts, seconds, game.size))

    def timed_leaves(self, playouts: int | None, seconds: float | None, size: int) -> int | None:
        """The clock's batch size K (``Clock.leaves``), passed to every search: the shape compiled for the
        clock (the GTP warm-up sets it), else chosen here for the first tree search on a time budget from its
        seconds (``budget.first_batch_size``) and kept, so that no move's time goes to compiling a new shape."""
        config = self.config
        timed = playouts is None and seconds is not None and not config.leaves_per_batch
        if timed and self.clock.leaves is None and config.strategy in TREE_STRATEGIES:
            self.clock.leaves = first_batch_size(config, None, seconds, size)
        return self.clock.leaves

    # -- moves ------------------------------------------------------------------------------------------------
    def choose(self, game, colour: int, cleanup: bool = False, stop=None) -> Decision:
        """The move for ``colour`` (the game's side to move is set to it); the board is not changed.  ``stop``:
        () -> bool, checked during the search: True ends it with its result (GTP interrupt)."""
        early = self.decide_without_search(game, colour, cleanup)
        if early is not None:
            return early
        forbid_pass = cleanup and self.has_dead_stones(game, -colour)
        result = self.search.search(game, self.limits(game, colour, forbid_pass, stop))
        return self.decide(game, colour, result, cleanup, forbid_pass)

    def ponder(self, game, stop) -> SearchResult | None:
        """Think on the opponent's time: search the game's position for its side to move (the opponent) until
        ``stop()`` returns True, for at most ``PONDER_MOVES`` moves' budgets (memory stays bounded when the
        opponent thinks long).  None when the search cannot ponder (a remote one) or the game is over."""
        ponder = getattr(self.search, "ponder", None)
        if ponder is None or game.is_over() or not game.legal_moves(game.to_play)[:-1].any():
            return None
        limits = self.limits(game, -game.to_play, stop=stop, moves=PONDER_MOVES)  # our own move's budget
        return ponder(game, limits)

    def decide_without_search(self, game, colour: int, cleanup: bool = False) -> Decision | None:
        """Rules 1-2: the move when no search is needed (only pass, random, passing wins), else None.  The
        game's side to move is set to ``colour``."""
        legal = game.legal_moves(colour)
        if not legal[:-1].any():
            return Decision(game.pass_move, "only pass")
        if self.config.strategy == "random":
            return Decision(int(self.rng.choice(np.flatnonzero(legal[:-1]))), "random")
        if colour != game.to_play:
            game.set_to_play(colour)
        opponent_passed = bool(game.moves) and game.moves[-1] == (-colour, game.pass_move)
        if not cleanup and opponent_passed and self.passing_wins(game, colour):
            return Decision(game.pass_move, "passing wins")
        return None

    def decide(self, game, colour: int, result: SearchResult, cleanup: bool = False,
               forbid_pass: bool = False) -> Decision:
        """Rules 3-5 on a finished search of the game's position (also for searches run elsewhere, such as the
        streamed ``*-genmove_analyze``): the PV's first move, resignation, no pass in cleanup when forbidden."""
        self.last_result = result
        legal = game.legal_moves(colour)
        move = result.pv[0] if result.pv else result.move
        if forbid_pass and move == game.pass_move:
            move = self._best_non_pass(result, legal, game.pass_move)
        if not legal[move]:  # a remote search's answer for another position: never play an illegal move
            move = game.pass_move
        decision = Decision(move, "search", result)
        cfg = self.config
        if (result.win_rate < cfg.resign_threshold and result.playouts >= cfg.resign_min_playouts
                and cfg.strategy != "depth2" and not cleanup):
            decision = Decision(RESIGN, "resign", result)
        self.debug(f"{'black' if colour == 1 else 'white'}: "
                   f"{'resign' if decision.move == RESIGN else point_to_gtp(decision.move, game.size)} "
                   f"win rate {result.win_rate:.3f} playouts {result.playouts} in {result.seconds:.2f} s "
                   f"pv {' '.join(point_to_gtp(m, game.size) for m in result.pv[:6])}")
        return decision

    @staticmethod
    def _best_non_pass(result: SearchResult, legal, pass_move: int) -> int:
        for action in rank_actions(result.visits, result.values):
            if action != pass_move and legal[action] and result.visits[action] > 0:
                return int(action)
        return pass_move

    # -- the end of the game ----------------------------------------------------------------------------------
    def ownership(self, game, playouts: int = OWNERSHIP_PLAYOUTS) -> np.ndarray:
        """float [size, size] mean final owner (+1 Black, -1 White) of every point, from the search's playouts."""
        return np.asarray(self.search.ownership(game, playouts), np.float64).reshape(game.size, game.size)

    def stone_status(self, game, playouts: int = OWNERSHIP_PLAYOUTS) -> np.ndarray:
        """str [P]: 'alive', 'dead' or 'seki' for every stone, '' for empty points (``judged_status``: an
        unsettled chain is not dead)."""
        return judged_status(game.board().reshape(-1), self.ownership(game, playouts).reshape(-1))

    def has_dead_stones(self, game, colour: int) -> bool:
        status = self.stone_status(game)
        return bool(np.any((status == "dead") & (game.board().reshape(-1) == colour)))

    def settled_score(self, game, dead_mask=None) -> float:
        """Tromp-Taylor score (Black - White - komi) after removing the dead stones (bool [P], default judged
        from the playouts)."""
        if dead_mask is None:
            dead_mask = self.stone_status(game) == "dead"
        board = game.board().reshape(-1).copy()
        board[np.asarray(dead_mask, bool)] = 0
        settled = Game(game.rules)
        for colour in (1, -1):
            points = np.flatnonzero(board == colour)
            if len(points):
                settled.setup_stones(colour, points)
        return settled.score()

    def passing_wins(self, game, colour: int, settled_fraction: float = 0.85) -> bool:
        """Would ``colour`` win if the game ended now?  Only on a settled board: the playouts agree on the owner
        (|mean ownership| > 0.5) of at least ``settled_fraction`` of the points, no chain is unsettled
        (``unsettled_stones``: a group whose fate is open means play is left), and both the Tromp-Taylor
        score as the board stands and the score with the dead stones removed win for ``colour``.  (A lone stone
        on an empty board wins by Tromp-Taylor, but the game is not over.)"""
        if game.score() * colour <= 0:
            return False
        owner = self.ownership(game).reshape(-1)
        if np.mean(np.abs(owner) > 0.5) < settled_fraction:
            return False
        board = game.board().reshape(-1)
        status = stone_status(board, owner)  # no unsettled chain past the check below: judged_status's own
        if (unsettled_stones(board, owner) & (status != "seki")).any():
            return False
        dead = status == "dead"
        return self.settled_score(game, dead) * colour > 0
