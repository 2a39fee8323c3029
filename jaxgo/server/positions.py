"""The positions of an analysis query: its game replayed once, a copy at every analysed turn.

``replay`` runs on the thread that submitted the query (a connection's reader, the web handler), never on the
device thread, so a long game (up to ``protocol.MAX_QUERY_MOVES`` moves, ~10 ms each on a 2-core CPU) holds
up only its own client.  Errors use KataGo's texts: ``Illegal move N: VERTEX`` with N the 0-based index in
``moves`` (KaTrain tests ``"Illegal move" in error``), the reason (occupied, ko, suicide, superko) in a
``reason`` field.  A ``ReplayCache`` keeps the last games replayed, so a query that extends an earlier one (the
next move of the same game) replays only its new moves.

``forbidden_actions`` turns the query's ``avoidMoves`` / ``allowMoves`` into the actions a tree node may not
search, by the colour to move and the node's depth below the analysed position.
"""

from __future__ import annotations

import collections
import dataclasses
import threading

import jax
import numpy as np

from jaxgo.go.coords import point_to_gtp
from jaxgo.go.game import IllegalMove
from jaxgo.server.protocol import Query, RequestError


@dataclasses.dataclass
class Turn:
    """One analysed turn: its number and an independent game at that position (the query's real rules)."""

    number: int
    game: object  # jaxgo.go.game.Game


def illegal_move_error(index: int, move: int, size: int, reason: str, ident) -> RequestError:
    """KataGo's error for the move at 0-based ``index`` of ``moves``."""
    return RequestError(f"Illegal move {index}: {point_to_gtp(int(move), size)}", "moves", ident, reason)


class ReplayCache:
    """The last few replayed games, by their setup and moves: a client's next query on the same game (KaTrain
    analysing move N + 1 after move N, a GTP front end after each move) replays only the new moves."""

    def __init__(self, entries: int = 32):
        self.entries = entries
        self._games: collections.OrderedDict = collections.OrderedDict()  # key -> game after those moves
        self._lock = threading.Lock()

    @staticmethod
    def _key(query: Query, count: int) -> tuple:
        rules = query.rules
        return (rules.size, rules.suicide, tuple(query.initial_stones), query.initial_player,
                tuple(query.moves[:count]))

    def longest_prefix(self, query: Query, limit: int):
        """(a copy of the cached game after the longest cached prefix of at most ``limit`` moves, its length),
        or (None, 0)."""
        with self._lock:
            for count in range(min(limit, len(query.moves)), 0, -1):
                game = self._games.get(self._key(query, count))
                if game is not None:
                    self._games.move_to_end(self._key(query, count))
                    return game.copy(), count
        return None, 0

    def store(self, query: Query, game, count: int) -> None:
        with self._lock:
            self._games[self._key(query, count)] = game.copy()
            while len(self._games) > self.entries:
                self._games.popitem(last=False)


def replay(query: Query, cache: ReplayCache | None = None) -> list[Turn]:
    """Play the query's setup and moves (simple ko while replaying, as KataGo's tolerant replay) and copy the
    position at each analysed turn, the side to move set as KataGo does; RequestError for bad input.  With a
    ``cache`` the replay starts from the longest cached prefix that comes before the first analysed turn."""
    wanted = set(query.analyze_turns)
    game, start = cache.longest_prefix(query, min(wanted)) if cache is not None else (None, 0)
    if game is None:
        game = _initial_game(query)
    turns = []
    for number in range(start, len(query.moves) + 1):
        if number in wanted:
            turns.append(Turn(number, _position_at(game, query, number)))
        if number == len(query.moves):
            break
        colour, move = query.moves[number]
        try:
            game.play(colour, move)
        except IllegalMove as exc:
            raise illegal_move_error(number, move, query.size, exc.reason, query.id) from None
    if cache is not None and query.moves:
        cache.store(query, game, len(query.moves))
    return turns


def _initial_game(query: Query):
    """The game before the first move: setup stones, and the side to move as KataGo chooses it."""
    from jaxgo.go.game import Game

    game = Game(dataclasses.replace(query.rules, ko_rule="simple"))
    try:
        if query.initial_player is not None and query.initial_player != game.to_play:
            game.set_to_play(query.initial_player)
        for colour in (1, -1):
            points = [p for c, p in query.initial_stones if c == colour]
            if points:
                game.setup_stones(colour, points)
        if query.initial_player is None and query.moves and query.moves[0][0] != game.to_play:
            game.set_to_play(query.moves[0][0])
    except IllegalMove as exc:
        raise RequestError(f"bad initial stones: {exc.reason}", "initialStones", query.id) from None
    return game


def _position_at(game, query: Query, number: int):
    """An independent copy with the query's real rules (superko from here on) and its position in numpy arrays
    (the search reads them on the device thread: a JAX array's conversion costs microseconds each time); a
    following move of the other colour decides who is to move at this turn (as in KataGo)."""
    snap = game.copy()
    snap.rules = query.rules
    if number < len(query.moves) and query.moves[number][0] != snap.to_play:
        snap.set_to_play(query.moves[number][0])
    snap.state = jax.tree_util.tree_map(np.asarray, snap.state)  # host arrays: the search reads them often
    return snap


def forbidden_actions(query: Query, colour: int, depth: int, num_actions: int) -> np.ndarray | None:
    """bool [A]: actions the query's avoidMoves/allowMoves forbid to ``colour`` at tree ``depth`` (0 = the
    analysed position), or None when no entry applies there."""
    out = None
    for restriction in query.restrictions:
        mask = restriction.forbidden(colour, depth, num_actions)
        if mask is not None:
            out = mask if out is None else out | mask
    return out


def max_restricted_depth(query: Query) -> int:
    """The depth below which no restriction applies (0 when the query has none)."""
    return max((r.until_depth for r in query.restrictions), default=0)
