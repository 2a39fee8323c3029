"""Live-analysis GTP commands: ``lz-analyze``, ``kata-analyze``, ``*-genmove_analyze`` and ``jaxgo-pv_gfx``.

One tree per game: in ``jaxgo gtp`` (no ``--server``) the searches run on the Player's own tree, the one that
``genmove`` and pondering search and reuse (``jaxgo.gtp.tree_analysis.TreeStream``, ``Player.tree_searcher``):
an analysis of the current position continues the tree genmove or pondering left, and the next genmove starts
from the analysed tree, its visits carried over.  The analysis runs on the read loop's thread, so it never runs
beside pondering (stopped before every command) or a command.  With an analysis connection (the ``jaxgo serve``
process of ``jaxgo gtp --server``, or one given to ``make_gtp_engine``), and for a Player without a tree in
this process (a flat or random strategy: a private in-process ``AnalysisEngine`` searches with RAVE), a
position is sent as a KataGo query (``jaxgo.gtp.remote.position_query``: setup stones + moves) whose
``overrideSettings`` carry the session's ``SearchConfig`` (so analysis searches like ``genmove``) and win rates
for the side to move, with ``reportDuringSearchEvery`` = the interval.  Both give the same stream of KataGo
responses (``open_stream``), written as the lines below.

Streaming: an analysis handler answers ``=`` at once and leaves an ``AnalysisStream`` in
``session.analysis.stream``; the read loop (``jaxgo.gtp.loop.serve``) writes its info lines until the next
input line arrives (or, for genmove_analyze, until the ``play MOVE`` line), then the empty line ending the
response; a report with no move (a finished game) writes nothing.  On the Player's tree ``lz-analyze`` has
no playout limit (the tree's node cap bounds its memory); on a connection it ends after ``ANALYSIS_VISITS``.
``*-genmove_analyze`` chooses its move with ``Player.decide`` on the search's result, so it follows the same PV /
resign rules as ``genmove``; its budget is the Player's (playouts, seconds or the clock, a clock share cut to
``settings.MAX_CLOCK_SECONDS``), and GoGui's ``# interrupt`` line ends its search early with the best move so far.

Output formats (one line per report):
    lz-analyze:   ``info move D4 visits 120 winrate 5312 prior 123 lcb 5001 order 0 pv D4 C3 info move ...``
                  (winrate, prior and lcb are x10000 integers, as Leela Zero writes them; Lizzie/Sabaki read them)
    kata-analyze: ``info move D4 visits 120 utility 0.06 winrate 0.53 scoreMean 1.2 scoreStdev 31.5 scoreLead 1.2
                  scoreSelfplay 1.2 prior 0.0123 lcb 0.50 utilityLcb 0.0 order 0 pv D4 C3 info ... ownership v ...``
                  (floats, always written with a decimal point: ``1.0``, never ``1``, since Sabaki's releases
                  read a winrate without ``.`` as the x10000 integer format; ``ownership`` X*Y values from
                  the top-left, for the side to move, when asked)
    ``analyze`` / ``genmove_analyze`` write the lz-analyze format (Sabaki picks ``analyze`` first and reads it
    as integers).  Lizzie reads the kata format only from an engine whose ``name`` starts with ``KataGo``, so
    it sends jaxgo ``lz-analyze``.
Arguments (every form KataGo accepts): ``[colour] [interval]`` then ``key value`` pairs: ``interval``
(centiseconds, ASCII digits), ``ownership`` true/false, ``maxmoves`` N, ``minmoves`` N (accepted),
``avoid``/``allow`` (3 values, accepted and ignored), ``ownershipStdev``, ``movesOwnership``, ``pvVisits``,
``pvEdgeVisits``, ``rootInfo`` (accepted and ignored).
"""

from __future__ import annotations

import queue
import time

from jaxgo.go.coords import BLACK, parse_color, point_to_gtp
from jaxgo.gtp.protocol import GtpError, int_arg, is_integer
from jaxgo.gtp.settings import capped_clock_seconds

DEFAULT_INTERVAL = 1.0  # seconds between reports when no interval is given
MIN_INTERVAL = 0.05
MAX_INTERVAL_CENTISECONDS = 360_000  # one hour
PV_GFX_VISITS = 400  # jaxgo-pv_gfx's default search
MAX_PV_GFX_VISITS = 1 << 16


class AnalysisStream:
    """Lines to stream after ``=``; ``None`` items are keep-alive ticks (the loop checks for input then).
    ``interruptible``: any input line ends it (lz-analyze); else it runs to its end (genmove_analyze)."""

    def __init__(self, lines, interruptible: bool = True):
        self.lines = lines
        self.interruptible = interruptible

    def close(self) -> None:
        close = getattr(self.lines, "close", None)
        if close is not None:
            close()


# -- arguments and output -------------------------------------------------------------------------------------
def parse_analyze_args(args: list[str], default_colour: int) -> dict:
    """``[colour] [interval] [key value ...]`` -> {"colour", "interval" (s), "ownership", "maxmoves"}."""
    out = {"colour": default_colour, "interval": DEFAULT_INTERVAL, "ownership": False, "maxmoves": None}
    words = list(args)
    if words:
        try:
            out["colour"] = parse_color(words[0])
            words.pop(0)
        except ValueError:
            pass
    if words and is_integer(words[0]):
        out["interval"] = _interval(words.pop(0))
    while words:
        _parse_option(words, out)
    out["interval"] = max(out["interval"], MIN_INTERVAL)
    return out


def _interval(word: str) -> float:
    """Seconds from an interval in centiseconds (0 .. one hour)."""
    return int_arg(word, 0, MAX_INTERVAL_CENTISECONDS, "interval out of range") / 100.0


def _parse_option(words: list[str], out: dict) -> None:
    """Consume one ``key value`` option (``avoid``/``allow`` take three values) from ``words`` into ``out``."""
    key = words.pop(0).lower()
    if key in ("avoid", "allow"):
        if len(words) < 3:
            raise GtpError("syntax error")
        del words[:3]
        return
    if not words:
        raise GtpError("syntax error")
    value = words.pop(0)
    if key == "interval":
        out["interval"] = _interval(value)
    elif key == "ownership":
        if value.lower() not in ("true", "false"):
            raise GtpError("syntax error")
        out["ownership"] = value.lower() == "true"
    elif key in ("maxmoves", "minmoves"):
        number = int_arg(value, 0, None)
        if key == "maxmoves":
            out["maxmoves"] = number
    elif key not in ("ownershipstdev", "movesownership", "pvvisits", "pvedgevisits", "rootinfo"):
        raise GtpError(f"unknown analyze option {key}")


def _fmt(value: float, digits: int = 6) -> str:
    """A float with at most ``digits`` decimals and always a decimal point (``1.0``, ``0.5``, ``-0.25``)."""
    value = float(value) if value == value else 0.0
    text = f"{value:.{digits}f}".rstrip("0")
    text = text + "0" if text.endswith(".") else text
    return "0.0" if text in ("-0.0", "-0") else text


def info_line(response: dict, kind: str, ownership: bool = False, maxmoves: int | None = None) -> str:
    """One analysis report as an lz-analyze / kata-analyze line (win rates for the side to move)."""
    infos = response.get("moveInfos", [])
    if maxmoves:
        infos = infos[:maxmoves]
    parts = [_lz_move(info) if kind == "lz" else _kata_move(info) for info in infos]
    line = " ".join(parts)
    if kind == "kata" and ownership and "ownership" in response:
        line += (" " if line else "") + "ownership " + " ".join(_fmt(v, 4) for v in response["ownership"])
    return line


def _lz_move(info: dict) -> str:
    return (f"info move {info['move']} visits {info['visits']} "
            f"winrate {int(round(10000 * info['winrate']))} prior {int(round(10000 * info['prior']))} "
            f"lcb {int(round(10000 * max(0.0, info['lcb'])))} order {info['order']} pv {' '.join(info['pv'])}")


def _kata_move(info: dict) -> str:
    return (f"info move {info['move']} visits {info['visits']} utility {_fmt(info['utility'])} "
            f"winrate {_fmt(info['winrate'])} scoreMean {_fmt(info['scoreMean'], 3)} "
            f"scoreStdev {_fmt(info.get('scoreStdev', 0.0), 3)} "
            f"scoreLead {_fmt(info['scoreLead'], 3)} scoreSelfplay {_fmt(info['scoreMean'], 3)} "
            f"prior {_fmt(info['prior'])} lcb {_fmt(info['lcb'])} utilityLcb {_fmt(2 * info['lcb'] - 1)} "
            f"order {info['order']} pv {' '.join(info['pv'])}")


# -- lz-analyze / kata-analyze --------------------------------------------------------------------------------
def _stream_lines(stream, kind: str, options: dict, tick: float = 0.05, session=None):
    """Info lines for each report of ``stream``, ``None`` ticks while waiting; terminates the query when closed.
    Each report becomes the ``session``'s last analysis (GoGui's "Search statistics" shows it)."""
    finished = False
    try:
        while True:
            try:
                response = stream.get(timeout=tick)
            except queue.Empty:
                yield None
                continue
            except ConnectionError:  # the analysis server went away: end the response
                finished = True
                return
            if "error" in response:
                finished = True
                return
            if "moveInfos" in response:
                _remember(session, response, kind)
                yield info_line(response, kind, options["ownership"], options["maxmoves"])
            if "turnNumber" in response and not response.get("isDuringSearch", False):
                finished = True
                return
    finally:
        if not finished:
            stream.terminate()


def _remember(session, response: dict, kind: str) -> None:
    """Keep an analysis report as the session's last search (``jaxgo-search_stats``)."""
    if session is None or "rootInfo" not in response:
        return
    from jaxgo.gtp.remote import result_from_response

    session.analysis.last = (result_from_response(response, session.size), kind)


def own_tree(session, game):
    """The ``Searcher`` of the Player's tree when live analysis searches it: no analysis connection was given and
    the Player searches a tree in this process; else None (the analysis connection's engine searches)."""
    if session.analysis.given:
        return None
    return session.player_after_warmup().tree_searcher(game)


def open_stream(session, colour: int, visits: int | None, *, interval: float | None = None,
                ownership: bool = False):
    """The stream of analysis responses (``get(timeout)``, ``terminate()``) of a search of ``visits`` visits for
    ``colour`` to move in the session's position (None: until terminated, on the Player's tree, where the node
    cap bounds the memory; ``ANALYSIS_VISITS`` on a connection): on the Player's tree (``own_tree``), else a
    query on the analysis connection."""
    from jaxgo.gtp.remote import ANALYSIS_VISITS, position_query
    from jaxgo.gtp.tree_analysis import UNTIL_TERMINATED, open_tree_stream

    game = session.game
    searcher = own_tree(session, game)
    if searcher is not None:
        return open_tree_stream(searcher, game, colour, UNTIL_TERMINATED if visits is None else visits,
                                interval=interval, ownership=ownership)
    query = position_query(game, colour, session.config, ANALYSIS_VISITS if visits is None else visits,
                           interval=interval, ownership=ownership)
    return session.analysis.connection().query(query)


def analyze(session, args: list[str], kind: str) -> str:
    """Stream analysis of the position for the given colour until the next command."""
    options = parse_analyze_args(args, session.game.to_play)
    stream = open_stream(session, options["colour"], None, interval=options["interval"],
                         ownership=options["ownership"])
    session.analysis.stream = AnalysisStream(_stream_lines(stream, kind, options, session=session),
                                             interruptible=True)
    return ""


# -- *-genmove_analyze ----------------------------------------------------------------------------------------
def _genmove_lines(session, stream, kind: str, options: dict, colour: int, seconds: float | None):
    """Reports during the search, then ``play MOVE`` (the Player's decision on the search's result -- the tree's
    own when it searched the Player's tree -- played on the session's board).  GoGui's ``# interrupt`` ends the
    search early (its partial result decides the move)."""
    from jaxgo.gtp.remote import result_from_response, search_responses
    from jaxgo.search.player import Decision

    start = time.perf_counter()
    final = None
    try:
        for response in search_responses(stream, seconds, stop=session.interrupted):
            if "moveInfos" in response:
                _remember(session, response, kind)
                yield info_line(response, kind, options["ownership"], options["maxmoves"])
            final = response
    except GtpError as exc:
        session.debug(f"genmove_analyze: {exc}")
        final = None
    game = session.game
    if final is None:
        decision = Decision(game.pass_move, "no search result")
    else:
        result = getattr(stream, "result", None) or result_from_response(final, game.size,
                                                                        time.perf_counter() - start)
        decision = session.player.decide(game, colour, result)
    yield _play_decision(session, colour, decision)


def _play_decision(session, colour: int, decision) -> str:
    """Play a decision on the session's board; the ``play MOVE`` line that ends a genmove_analyze stream."""
    from jaxgo.search.player import RESIGN

    if decision.move == RESIGN:
        return "play resign"
    session.game.play(colour, decision.move)
    session.ponder.requested = True  # as after genmove: ponder until the next command, when pondering is on
    return f"play {point_to_gtp(decision.move, session.size)}"


def genmove_analyze(session, args: list[str], kind: str) -> str:
    """Search with reports for the given colour, then play the Player's move; the stream ends ``play MOVE``."""

    options = parse_analyze_args(args, session.game.to_play)
    colour, game, player = options["colour"], session.game, session.player_after_warmup()
    if colour != game.to_play:
        game.set_to_play(colour)
    early = player.decide_without_search(game, colour)
    if early is not None:
        session.analysis.stream = AnalysisStream(iter([_play_decision(session, colour, early)]), False)
        return ""
    playouts, seconds = player.budget(game, colour)
    seconds = capped_clock_seconds(player, seconds)  # a clock share is capped as genmove's
    stream = open_stream(session, colour, playouts, interval=options["interval"],
                         ownership=options["ownership"])
    session.analysis.stream = AnalysisStream(_genmove_lines(session, stream, kind, options, colour, seconds),
                                             interruptible=False)
    return ""


# -- GoGui ----------------------------------------------------------------------------------------------------
def pv_gfx(session, args: list[str]) -> str:
    """GoGui gfx: the principal variation of a short search as ``VAR b D4 w C3 ...``."""
    from jaxgo.gtp.remote import search_responses

    if len(args) > 1:
        raise GtpError("syntax error")
    visits = int_arg(args[0], 1, MAX_PV_GFX_VISITS, f"visits must be 1..{MAX_PV_GFX_VISITS}") if args else \
        PV_GFX_VISITS
    game = session.game
    response = {}
    for response in search_responses(open_stream(session, game.to_play, visits), stop=session.interrupted):
        pass
    if not response.get("moveInfos"):
        return ""
    colour = game.to_play
    words = []
    for move in response["moveInfos"][0]["pv"]:
        words.append(f"{'b' if colour == BLACK else 'w'} {move}")
        colour = -colour
    return "VAR " + " ".join(words)


COMMANDS = {
    "lz-analyze": lambda session, args: analyze(session, args, "lz"),
    "kata-analyze": lambda session, args: analyze(session, args, "kata"),
    "analyze": lambda session, args: analyze(session, args, "lz"),
    "lz-genmove_analyze": lambda session, args: genmove_analyze(session, args, "lz"),
    "kata-genmove_analyze": lambda session, args: genmove_analyze(session, args, "kata"),
    "genmove_analyze": lambda session, args: genmove_analyze(session, args, "lz"),
    "jaxgo-pv_gfx": pv_gfx,
}

__all__ = ["COMMANDS", "AnalysisStream", "info_line", "parse_analyze_args"]
