"""Searches over an analysis-server connection: KataGo queries for a game and ``RemoteSearch``.

``jaxgo gtp --server ADDR`` plays through the same ``Player`` as the local engine; only its search differs:
``RemoteSearch(connection, config)`` sends each search to ``jaxgo serve`` (a ``jaxgo.server.client``
``ServerClient``, or a ``LocalConnection`` to an in-process analysis engine) as a KataGo query whose
``overrideSettings`` carry the ``SearchConfig`` by field name, so the server searches with the engine's own
options, and turns the final response back into a ``result.SearchResult``.  The live-analysis commands
(``jaxgo.gtp.analysis``) build their queries with the same ``position_query``.

Response -> SearchResult: ``visits`` / ``values`` per action from ``moveInfos`` (win rates for the side to
move, NaN where a move was not searched), ``move`` / ``win_rate`` / ``pv`` from the first (best, ordered by
``tree.rank_actions`` on the server) move info, ``playouts`` = ``rootInfo.visits``.  A seconds budget
terminates the query after that time; the server then sends its partial final result.  So does the limits'
stop check when it turns true (``SearchLimits.should_stop``: GoGui's ``# interrupt`` line, polled every
``POLL_SECONDS``).
"""

from __future__ import annotations

import dataclasses
import queue
import time

import numpy as np

from jaxgo.go.coords import colour_letter, gtp_moves
from jaxgo.gtp.protocol import GtpError
from jaxgo.search.config import TREE_STRATEGIES, SearchConfig
from jaxgo.search.limits import SearchLimits
from jaxgo.search.player import OWNERSHIP_PLAYOUTS
from jaxgo.search.result import SearchResult
from jaxgo.server.client import ServerClosed
from jaxgo.server.protocol import RequestError, parse_vertex

ANALYSIS_VISITS = 1 << 18  # "until interrupted": a search with only a time budget stops here at the latest
RESPONSE_LIMIT = 600.0  # seconds to wait for a final response beyond the search's own time budget
POLL_SECONDS = 0.1  # how often a search waiting for responses checks ``stop``


# -- queries --------------------------------------------------------------------------------------------------
def position_fields(game) -> dict:
    """KataGo query fields for a ``jaxgo.go.game.Game``: setup stones, first player, moves (GTP vertices).

    The setup is the position before the first move (handicap / SGF AB/AW); when setup stones were placed
    after a move, the current position is sent as the setup instead (the move history is then lost).
    """
    size = game.size
    start, moves = game.start_position()
    stones = np.asarray(start.stones)
    fields = {
        "boardXSize": size, "boardYSize": size, "komi": float(game.rules.komi),
        "rules": {"ko": game.rules.ko_rule.upper(), "suicide": bool(game.rules.suicide), "scoring": "AREA"},
        "initialStones": gtp_moves([(stones[p], p) for p in np.flatnonzero(stones)], size),
        "initialPlayer": colour_letter(int(start.to_play)),
        "moves": gtp_moves(moves, size),
    }
    if not moves:
        fields["initialPlayer"] = colour_letter(game.to_play)
    return fields


def search_settings(config: SearchConfig, perspective: str = "SIDETOMOVE") -> dict:
    """``overrideSettings``: every ``SearchConfig`` field by name, plus the win-rate perspective.  The server
    runs tree searches only: a position of an engine with another strategy (``random``, or a flat one of the
    local engine) is analysed with RAVE."""
    if config.strategy not in TREE_STRATEGIES:
        config = dataclasses.replace(config, strategy="rave")
    return dict(config.to_dict(), reportAnalysisWinratesAs=perspective)


def position_query(game, colour: int, config: SearchConfig, visits: int, *, interval: float | None = None,
                   ownership: bool = False, territory: bool = False, perspective: str = "SIDETOMOVE") -> dict:
    """A KataGo query for ``colour`` to move in ``game``'s position, searched with ``config``."""
    fields = position_fields(game)
    name = colour_letter(colour)
    if not fields["moves"]:
        fields["initialPlayer"] = name
    elif fields["moves"][-1][0] == name:  # the same colour moves again (GTP allows it): the other one passes
        fields["moves"].append(["W" if name == "B" else "B", "pass"])
    query = dict(fields, maxVisits=int(visits), includeOwnership=bool(ownership),
                 overrideSettings=search_settings(config, perspective))
    if territory:
        query["includeTerritory"] = True
    if interval is not None:
        query["reportDuringSearchEvery"] = float(interval)
    return query


# -- responses ------------------------------------------------------------------------------------------------
def is_final(response: dict) -> bool:
    """Whether a response is the final result of an analysed turn."""
    return "turnNumber" in response and not response.get("isDuringSearch", False)


def search_responses(stream, seconds: float | None = None, limit: float = RESPONSE_LIMIT, stop=None):
    """The responses of one query's stream, the final one last.  With ``seconds`` the query is terminated after
    that time, and when ``stop()`` turns true (the server then sends its partial result); GtpError for an
    error, no results, a closed connection, or no final response within ``limit`` seconds beyond the budget."""
    now = time.monotonic()
    stop_at = None if seconds is None else now + seconds
    deadline = now + limit + (seconds or 0.0)
    terminated = False
    while time.monotonic() < deadline:
        if not terminated and ((stop_at is not None and time.monotonic() >= stop_at) or (stop and stop())):
            stream.terminate()
            terminated = True
        wait = POLL_SECONDS if terminated or stop_at is None else max(0.01, min(POLL_SECONDS,
                                                                                stop_at - time.monotonic()))
        try:
            response = stream.get(timeout=wait)
        except queue.Empty:
            continue
        except ServerClosed:
            raise GtpError("analysis server connection closed") from None
        if "error" in response:
            raise GtpError(str(response["error"]))
        if response.get("noResults"):
            raise GtpError("search ended without results")
        yield response
        if is_final(response):
            return
    raise GtpError("analysis timed out")


def final_response(connection, query: dict, seconds: float | None = None, stop=None) -> dict:
    """The final response to ``query`` on ``connection`` (terminated after ``seconds`` when given, or when
    ``stop()`` turns true)."""
    response = None
    for response in search_responses(connection.query(query), seconds, stop=stop):
        pass
    return response


def _action(text: str, size: int) -> int:
    try:
        return parse_vertex(text, size, "move", None)
    except RequestError as exc:
        raise GtpError(f"bad move in analysis response: {exc}") from None


def result_from_response(response: dict, size: int, seconds: float = 0.0) -> SearchResult:
    """The ``SearchResult`` of a final response whose win rates are for the side to move."""
    pass_move = size * size
    visits = np.zeros(pass_move + 1, np.float64)
    values = np.full(pass_move + 1, np.nan)
    infos = response.get("moveInfos") or []
    for info in infos:
        action = _action(info["move"], size)
        visits[action], values[action] = float(info["visits"]), float(info["winrate"])
    root = response.get("rootInfo", {})
    playouts = int(root.get("visits", 0))
    if not infos:
        return SearchResult(pass_move, float(root.get("winrate", 0.5)), playouts, seconds, visits, values,
                            [pass_move])
    best = infos[0]
    move = _action(best["move"], size)
    pv = [_action(text, size) for text in best.get("pv", [])]
    if not pv or pv[0] != move:
        pv = [move] + pv
    return SearchResult(move, float(best["winrate"]), playouts, seconds, visits, values, pv)


# -- the search interface -------------------------------------------------------------------------------------
class RemoteSearch:
    """The Player's search interface over an analysis connection (``query(dict)`` -> stream).  ValueError for
    a flat strategy (mc, amaf, pp, depth2): the server runs tree searches only."""

    def __init__(self, connection, config: SearchConfig | None = None):
        self.connection = connection
        self.set_config(config if config is not None else SearchConfig())
        self.last_response: dict | None = None  # the final response behind the last search

    def set_config(self, config: SearchConfig) -> None:
        """Search with ``config`` from now on; ValueError for a strategy the server cannot run."""
        if config.strategy not in TREE_STRATEGIES + ("random",):
            raise ValueError(f"strategy {config.strategy!r}: the server runs tree searches only "
                             f"({', '.join(TREE_STRATEGIES)}; or random, which needs no search)")
        self.config = config

    def search(self, game, limits: SearchLimits) -> SearchResult:
        """Search the game's position for its side to move within the budget and stop check of ``limits``.
        ``forbid_pass`` is not sent: the Player then plays the best searched move other than pass."""
        playouts, seconds = limits.budget()
        visits = playouts if playouts is not None else ANALYSIS_VISITS
        query = position_query(game, game.to_play, self.config, visits)
        start = time.perf_counter()
        response = final_response(self.connection, query, seconds, stop=limits.should_stop)
        self.last_response = response
        return result_from_response(response, game.size, time.perf_counter() - start)

    def ownership(self, game, playouts: int = OWNERSHIP_PLAYOUTS) -> np.ndarray:
        """float [size, size] mean final owner (+1 Black) from a server search of ``playouts`` playouts."""
        query = position_query(game, game.to_play, self.config, playouts, ownership=True, perspective="BLACK")
        response = final_response(self.connection, query)
        if "ownership" not in response:
            raise GtpError("ownership not available")
        return np.asarray(response["ownership"], np.float64).reshape(game.size, game.size)

    def reset(self) -> None:
        """Nothing to forget here: the server keeps no tree between queries."""
