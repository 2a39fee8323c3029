"""Live-analysis GTP commands (``lz-analyze``, ``kata-analyze``, ``*-genmove_analyze``) and GoGui graphics.

The searches run in an analysis engine: the ``jaxgo serve`` process of a front end (``engine.analysis``, set by
``gtp_frontend``), else a private in-process ``AnalysisEngine`` created on first use.  A position is sent as a
KataGo query (setup stones + moves) with ``reportDuringSearchEvery`` = the interval and win rates for the side
to move (``overrideSettings.reportAnalysisWinratesAs = SIDETOMOVE``).

Streaming: an analysis handler answers ``=`` at once and leaves an ``AnalysisStream`` in
``engine.analysis_stream``; the read loop (``gtp_loop.serve``) writes its info lines until the next command
arrives (or, for genmove_analyze, until the ``play MOVE`` line), then the empty line ending the response.

Output formats (one line per report):
    lz-analyze:   ``info move D4 visits 120 winrate 5312 prior 123 lcb 5001 order 0 pv D4 C3 info move ...``
                  (winrate, prior and lcb are x10000 integers, as Leela Zero writes them; Lizzie/Sabaki read them)
    kata-analyze: ``info move D4 visits 120 utility 0.06 winrate 0.53 scoreMean 1.2 scoreStdev 0 scoreLead 1.2
                  scoreSelfplay 1.2 prior 0.0123 lcb 0.50 utilityLcb 0 order 0 pv D4 C3 info ... ownership v ...``
                  (floats; ``ownership`` X*Y values from the top-left, for the side to move, when asked)
Arguments: ``[colour] [interval]`` then ``key value`` pairs: ``interval`` (centiseconds), ``ownership``
true/false, ``maxmoves`` N, ``minmoves`` N (accepted), ``avoid``/``allow`` (3 values, accepted and ignored).
"""

from __future__ import annotations

import queue
import time

from jaxgo.go.coords import BLACK, WHITE

DEFAULT_INTERVAL = 1.0  # seconds between reports when no interval is given
ANALYSIS_VISITS = 1 << 18  # "until interrupted": the search stops (last report stays) after this many playouts


class AnalysisStream:
    """Lines to stream after ``=``; ``None`` items are keep-alive ticks (the loop checks for input then)."""

    def __init__(self, lines, interruptible: bool = True):
        self.lines = lines
        self.interruptible = interruptible

    def close(self) -> None:
        close = getattr(self.lines, "close", None)
        if close is not None:
            close()


def _gtp_error(message: str):
    from jaxgo.gtp.engine import GtpError

    return GtpError(message)


def connection(engine):
    """The engine's analysis connection: the server's (front end) or a private in-process engine."""
    conn = getattr(engine, "analysis", None)
    if conn is None:
        from jaxgo.server.client import LocalConnection

        conn = LocalConnection()
        engine.analysis = conn
    return conn


def position_fields(game) -> dict:
    """KataGo query fields for a ``jaxgo.go.game.Game``: setup stones, first player, moves (GTP vertices).

    The setup is the position before the first move (handicap / SGF AB/AW); when setup stones were placed
    after a move, the current position is sent as the setup instead (the move history is then lost).
    """
    from jaxgo.server.protocol import vertex

    size = game.size
    entries = game._undo_stack
    first_move = next((i for i, (_, _, was_move) in enumerate(entries) if was_move), None)
    late_setup = first_move is not None and any(not was for _, _, was in entries[first_move:])
    if first_move is None or late_setup:
        start, moves = game.state, [] if late_setup else list(game.moves)
    else:
        start, moves = entries[first_move][0], list(game.moves)
    import numpy as np

    stones = np.asarray(start.stones)
    fields = {
        "boardXSize": size, "boardYSize": size, "komi": float(game.rules.komi),
        "rules": {"ko": game.rules.ko_rule.upper(), "suicide": bool(game.rules.suicide), "scoring": "AREA"},
        "initialStones": [["B" if stones[p] == BLACK else "W", vertex(p, size)] for p in np.flatnonzero(stones)],
        "initialPlayer": "B" if int(start.to_play) == BLACK else "W",
        "moves": [["B" if c == BLACK else "W", vertex(m, size)] for c, m in moves],
    }
    if not moves:
        fields["initialPlayer"] = "B" if game.to_play == BLACK else "W"
    return fields


def parse_analyze_args(args: list[str], default_colour: int) -> dict:
    """``[colour] [interval] [key value ...]`` -> {"colour", "interval" (s), "ownership", "maxmoves"}."""
    from jaxgo.go.coords import parse_color

    out = {"colour": default_colour, "interval": DEFAULT_INTERVAL, "ownership": False, "maxmoves": None}
    words = list(args)
    if words:
        try:
            out["colour"] = parse_color(words[0])
            words.pop(0)
        except ValueError:
            pass
    if words and words[0].isdigit():
        out["interval"] = int(words.pop(0)) / 100.0
    while words:
        key = words.pop(0).lower()
        if key in ("avoid", "allow"):
            if len(words) < 3:
                raise _gtp_error("syntax error")
            del words[:3]
            continue
        if not words:
            raise _gtp_error("syntax error")
        value = words.pop(0)
        if key == "interval":
            if not value.isdigit():
                raise _gtp_error("syntax error")
            out["interval"] = int(value) / 100.0
        elif key == "ownership":
            if value.lower() not in ("true", "false"):
                raise _gtp_error("syntax error")
            out["ownership"] = value.lower() == "true"
        elif key in ("maxmoves", "minmoves"):
            if not value.isdigit():
                raise _gtp_error("syntax error")
            if key == "maxmoves":
                out["maxmoves"] = int(value)
        elif key in ("ownershipstdev", "movesownership", "pvvisits", "pvedgevisits", "rootinfo"):
            continue
        else:
            raise _gtp_error(f"unknown analyze option {key}")
    out["interval"] = max(out["interval"], 0.05)
    return out


def _fmt(value: float, digits: int = 6) -> str:
    return f"{value:.{digits}f}".rstrip("0").rstrip(".") if value == value else "0"


def info_line(response: dict, kind: str, ownership: bool = False, maxmoves: int | None = None) -> str:
    """One analysis report as an lz-analyze / kata-analyze line (win rates for the side to move)."""
    infos = response.get("moveInfos", [])
    if maxmoves:
        infos = infos[:maxmoves]
    parts = []
    for info in infos:
        pv = " ".join(info["pv"])
        if kind == "lz":
            parts.append(f"info move {info['move']} visits {info['visits']} "
                         f"winrate {int(round(10000 * info['winrate']))} prior {int(round(10000 * info['prior']))} "
                         f"lcb {int(round(10000 * max(0.0, info['lcb'])))} order {info['order']} pv {pv}")
        else:
            parts.append(f"info move {info['move']} visits {info['visits']} utility {_fmt(info['utility'])} "
                         f"winrate {_fmt(info['winrate'])} scoreMean {_fmt(info['scoreMean'], 3)} scoreStdev 0 "
                         f"scoreLead {_fmt(info['scoreLead'], 3)} scoreSelfplay {_fmt(info['scoreMean'], 3)} "
                         f"prior {_fmt(info['prior'])} lcb {_fmt(info['lcb'])} utilityLcb {_fmt(2 * info['lcb'] - 1)} "
                         f"order {info['order']} pv {pv}")
    line = " ".join(parts)
    if kind == "kata" and ownership and "ownership" in response:
        line += (" " if line else "") + "ownership " + " ".join(_fmt(v, 4) for v in response["ownership"])
    return line


def _analysis_query(engine, colour: int, visits: int, interval: float | None, ownership: bool) -> dict:
    fields = position_fields(engine.game)
    name = "B" if colour == BLACK else "W"
    if not fields["moves"]:
        fields["initialPlayer"] = name
    elif fields["moves"][-1][0] == name:  # the same colour moves again (GTP allows it): the other one passes
        fields["moves"].append(["W" if name == "B" else "B", "pass"])
    query = dict(fields, maxVisits=int(visits), includeOwnership=bool(ownership),
                 overrideSettings={"reportAnalysisWinratesAs": "SIDETOMOVE"})
    if interval is not None:
        query["reportDuringSearchEvery"] = float(interval)
    return query


def _stream_lines(stream, kind: str, options: dict, tick: float = 0.05):
    """Info lines for each report of ``stream``, ``None`` ticks while waiting; terminates the query when closed."""
    finished = False
    try:
        while True:
            try:
                response = stream.get(timeout=tick)
            except queue.Empty:
                yield None
                continue
            if "error" in response:
                finished = True
                return
            if "warning" in response:
                continue
            if "moveInfos" in response:
                yield info_line(response, kind, options["ownership"], options["maxmoves"])
            if not response.get("isDuringSearch", False):
                finished = True
                return
    finally:
        if not finished:
            stream.terminate()


def analyze(engine, args: list[str], kind: str) -> str:
    options = parse_analyze_args(args, engine.game.to_play)
    stream = connection(engine).query(_analysis_query(engine, options["colour"], ANALYSIS_VISITS,
                                                      options["interval"], options["ownership"]))
    engine.analysis_stream = AnalysisStream(_stream_lines(stream, kind, options), interruptible=True)
    return ""


def genmove_budget(engine) -> tuple[int, float | None]:
    """(maxVisits, seconds or None) for the next move from the engine's playouts / seconds / GTP clock."""
    playouts, seconds = engine.move_budget(engine.game.to_play)
    if playouts:
        return int(playouts), None
    return ANALYSIS_VISITS, float(seconds)


def _genmove_lines(engine, stream, kind: str, options: dict, colour: int):
    """Reports during the search, then ``play MOVE`` (the move is played on the engine's board)."""
    final = None
    while True:
        try:
            response = stream.get(timeout=600)
        except queue.Empty:
            break
        if "error" in response:
            break
        if "moveInfos" in response:
            yield info_line(response, kind, options["ownership"], options["maxmoves"])
        if "turnNumber" in response and not response.get("isDuringSearch", False):
            final = response
            break
    move = choose_move(final, engine.size) if final else engine.game.pass_move
    if move is None:
        yield "play resign"
        return
    engine.game.play(colour, move)
    from jaxgo.go.coords import point_to_gtp

    yield f"play {point_to_gtp(move, engine.size)}"


def choose_move(response: dict | None, size: int, resign_below: float = 0.0, min_visits: int = 1 << 30):
    """The most visited move of a final response (side-to-move win rates); None to resign."""
    from jaxgo.server.protocol import parse_vertex

    if not response or not response.get("moveInfos"):
        return size * size
    best = response["moveInfos"][0]
    if best["winrate"] < resign_below and response["rootInfo"]["visits"] >= min_visits:
        return None
    return parse_vertex(best["move"], size, "move", None)


def genmove_analyze(engine, args: list[str], kind: str) -> str:
    options = parse_analyze_args(args, engine.game.to_play)
    colour = options["colour"]
    if colour != engine.game.to_play:
        engine.game.set_to_play(colour)
    visits, _ = genmove_budget(engine)  # a time budget is not applied here: playouts (or 1000) only
    visits = visits if visits != ANALYSIS_VISITS else 1000
    stream = connection(engine).query(_analysis_query(engine, colour, visits, options["interval"],
                                                      options["ownership"]))
    engine.analysis_stream = AnalysisStream(_genmove_lines(engine, stream, kind, options, colour),
                                            interruptible=False)
    return ""


def final_response(engine, visits: int, ownership: bool = False, territory: bool = False,
                   seconds: float | None = None) -> dict:
    """One finished analysis of the current position: win rates for the side to move (ownership and
    territory for Black).  With ``seconds`` the search is terminated after that time (partial result)."""
    query = _analysis_query(engine, engine.game.to_play, visits, None, ownership)
    query["includeTerritory"] = territory
    if ownership or territory:
        query["overrideSettings"] = {"reportAnalysisWinratesAs": "BLACK"}
    stream = connection(engine).query(query)
    stop_at = None if seconds is None else time.monotonic() + seconds
    deadline = time.monotonic() + 600 + (seconds or 0)
    while time.monotonic() < deadline:
        wait = 1.0 if stop_at is None else max(0.01, stop_at - time.monotonic())
        try:
            response = stream.get(timeout=wait)
        except queue.Empty:
            if stop_at is not None and time.monotonic() >= stop_at:
                stream.terminate()
                stop_at = None
            continue
        if "error" in response:
            raise _gtp_error(response["error"])
        if response.get("noResults"):
            raise _gtp_error("search ended without results")
        if "turnNumber" in response and not response.get("isDuringSearch", False):
            return response
    raise _gtp_error("analysis timed out")


def pv_gfx(engine, args: list[str]) -> str:
    """GoGui gfx: the principal variation of a short search as ``VAR b D4 w C3 ...``."""
    visits = int(args[0]) if args and args[0].isdigit() else 400
    response = final_response(engine, visits)
    if not response.get("moveInfos"):
        return ""
    colour = engine.game.to_play
    words = []
    for move in response["moveInfos"][0]["pv"]:
        words.append(f"{'b' if colour == BLACK else 'w'} {move}")
        colour = -colour
    return "VAR " + " ".join(words)


def territory_dboard(engine, args: list[str]) -> str:
    """GoGui dboard: the CRF expected territory (+1 Black), top row first.

    ``jaxgo-territory`` without arguments asks the server (so a thin ``--server`` front end shares its device);
    with a model or inference argument (``[b5|blib] [bp|sw|exact]``) it is the CRF's own command
    (``jaxgo.gtp.territory``), run in this process."""
    if args:
        from jaxgo.gtp.territory import jaxgo_territory

        return jaxgo_territory(engine, args)
    response = final_response(engine, 16, territory=True)
    values = response.get("territory")
    if values is None:
        raise _gtp_error("territory not available")
    size = engine.size
    return "\n".join(" ".join(f"{v:.2f}" for v in values[r * size:(r + 1) * size]) for r in range(size))


COMMANDS = {
    "lz-analyze": lambda engine, args: analyze(engine, args, "lz"),
    "kata-analyze": lambda engine, args: analyze(engine, args, "kata"),
    "analyze": lambda engine, args: analyze(engine, args, "lz"),
    "lz-genmove_analyze": lambda engine, args: genmove_analyze(engine, args, "lz"),
    "kata-genmove_analyze": lambda engine, args: genmove_analyze(engine, args, "kata"),
    "genmove_analyze": lambda engine, args: genmove_analyze(engine, args, "lz"),
    "jaxgo-pv_gfx": pv_gfx,
    "jaxgo-territory": territory_dboard,
}

# What ``gogui-analyze_commands`` should list (the lead's GtpEngine lists its own; the front end lists these).
GOGUI_ANALYZE = ("dboard/Ownership (playouts)/jaxgo-ownership\n"
                 "dboard/Territory (CRF)/jaxgo-territory\n"
                 "gfx/Principal variation/jaxgo-pv_gfx\n"
                 "string/Search statistics/jaxgo-search_stats")

__all__ = ["COMMANDS", "AnalysisStream", "info_line", "parse_analyze_args", "position_fields", "WHITE"]
