"""GTP commands that play through the session's ``Player``: moves, handicap, clock, end of game, search info.

``genmove``, ``reg_genmove``, ``kgs-genmove_cleanup`` (moves: ``Player.choose``; the move played is the first
move of the search's principal variation, ``resign`` below the resign threshold, cleanup never resigns nor
passes while the opponent has dead stones), ``fixed_handicap``, ``place_free_handicap``, ``set_free_handicap``,
``time_settings``, ``kgs-time_settings``, ``time_left`` (the Player's ``Clock``), ``final_score``,
``final_status_list``, ``jaxgo-ownership`` (the Player's ownership and stone status), ``jaxgo-search_stats``
(the last search) and ``jaxgo-search_config [KEY VALUE]`` (the effective ``SearchConfig``, one ``key value``
line per field; with a key and a value it sets that option: GoGui's parameter dialog, ``jaxgo.gtp.params``).

Bounds against hostile numbers: a clock share is cut to ``settings.MAX_CLOCK_SECONDS`` per move (``time_settings 1e9
0 0`` still answers within a minute), ``jaxgo-ownership`` takes at most ``MAX_OWNERSHIP_PLAYOUTS``.
"""

from __future__ import annotations

import numpy as np

from jaxgo.go.coords import BLACK, WHITE, point_to_gtp
from jaxgo.gtp.protocol import (
    GtpError,
    board_rows,
    colour_arg,
    float_arg,
    int_arg,
    require_count,
    vertex_arg,
    vertices_text,
)
from jaxgo.gtp.settings import clock_share_capped, set_param

MAX_OWNERSHIP_PLAYOUTS = 1 << 14


# -- moves ----------------------------------------------------------------------------------------------------
def _choose(session, args: list[str], cleanup: bool = False):
    """(colour, Decision) for ``genmove``-like commands with one colour argument."""
    require_count(args, 1)
    colour = colour_arg(args[0], "syntax error")
    player, game = session.player_after_warmup(), session.game
    with clock_share_capped(player, game, colour):
        decision = player.choose(game, colour, cleanup=cleanup, stop=session.interrupted)
    session.analysis.last = None  # this search is now the last one (jaxgo-search_stats)
    return colour, decision


def genmove(session, args):
    """The Player's move for the colour (``pass`` or ``resign`` possible), played on the board."""
    from jaxgo.search.player import RESIGN

    colour, decision = _choose(session, args)
    if decision.move == RESIGN:
        return "resign"
    session.game.play(colour, decision.move)
    session.ponder.requested = True
    return point_to_gtp(decision.move, session.size)


def reg_genmove(session, args):
    """The move ``genmove`` would choose, without playing it."""
    from jaxgo.search.player import RESIGN

    _, decision = _choose(session, args)
    return "resign" if decision.move == RESIGN else point_to_gtp(decision.move, session.size)


def genmove_cleanup(session, args):
    """Like genmove, but never resigns nor passes while stones the playouts judge dead are on the board."""
    from jaxgo.search.player import RESIGN

    colour, decision = _choose(session, args, cleanup=True)
    move = session.game.pass_move if decision.move == RESIGN else decision.move
    session.game.play(colour, move)
    session.ponder.requested = True
    return point_to_gtp(move, session.size)


# -- handicap -------------------------------------------------------------------------------------------------
def fixed_handicap_points(size: int, count: int) -> list[int]:
    """GTP's fixed handicap placement (section 4.1.1) as points; ValueError where it is not defined."""
    if count < 2 or size < 7 or (size % 2 == 0 and count > 4) or count > 9 or (size == 7 and count > 4):
        raise ValueError("invalid number of stones")
    edge = 2 if size < 13 else 3
    low, mid, high = edge, size // 2, size - 1 - edge

    def point(col, row_from_bottom):
        return (size - 1 - row_from_bottom) * size + col

    corners = [point(high, high), point(low, low), point(high, low), point(low, high)]
    left, right, top, bottom = point(low, mid), point(high, mid), point(mid, high), point(mid, low)
    centre = point(mid, mid)
    order = {2: corners[:2], 3: corners[:3], 4: corners, 5: corners + [centre],
             6: corners + [left, right], 7: corners + [left, right, centre],
             8: corners + [left, right, top, bottom], 9: corners + [left, right, top, bottom, centre]}
    return order[count]


def free_handicap_points(size: int, count: int) -> list[int]:
    """The fixed pattern where it exists, else the next points nearest the centre (ValueError if impossible)."""
    if count < 2 or count >= size * size:
        raise ValueError("invalid number of stones")
    try:
        points = fixed_handicap_points(size, min(count, 9))
    except ValueError:
        points = []
    centre = size // 2
    extra = sorted(set(range(size * size)) - set(points),
                   key=lambda p: (abs(p // size - centre) + abs(p % size - centre), p))
    return (list(points) + extra[: max(0, count - len(points))])[:count]


def _place_handicap(session, points) -> str:
    game = session.game
    if np.any(game.board() != 0) or game.moves:
        raise GtpError("board not empty")
    game.setup_stones(BLACK, points)
    game.set_to_play(WHITE)
    return " ".join(point_to_gtp(p, session.size) for p in points)


def _handicap_by(placement, session, args):
    """``fixed_handicap N`` / ``place_free_handicap N``: the N points of ``placement(size, N)``, placed."""
    require_count(args, 1)
    count = int_arg(args[0])
    try:
        points = placement(session.size, count)
    except ValueError:
        raise GtpError("invalid number of stones") from None
    return _place_handicap(session, points)


def fixed_handicap(session, args):
    return _handicap_by(fixed_handicap_points, session, args)


def place_free_handicap(session, args):
    return _handicap_by(free_handicap_points, session, args)


def set_free_handicap(session, args):
    if not 2 <= len(args) < session.size * session.size:
        raise GtpError("syntax error")
    points = [vertex_arg(word, session.size, "syntax error") for word in args]
    if len(set(points)) != len(points) or session.game.pass_move in points:
        raise GtpError("syntax error")
    _place_handicap(session, points)
    return ""


# -- clock ----------------------------------------------------------------------------------------------------
def _set_clock(session, main: str, byo_time: str, byo_stones: str) -> str:
    """``Clock.set`` from three words; a bad number (``inf``, negative, not a number) is a syntax error.  A
    time limit answers once the search is compiled (``GtpSession.ready_for_clock``)."""
    try:
        session.clock.set(float_arg(main), float_arg(byo_time), int_arg(byo_stones))
    except ValueError:
        raise GtpError("syntax error") from None
    if session.clock.limited:
        session.ready_for_clock()
    return ""


def time_settings(session, args):
    require_count(args, 3)
    return _set_clock(session, *args)


def kgs_time_settings(session, args):
    """``none`` | ``absolute MAIN`` | ``byoyomi MAIN PERIOD_TIME PERIODS`` | ``canadian MAIN TIME STONES``;
    byo-yomi periods are treated as one period (the per-move share is what matters)."""
    if not args:
        raise GtpError("syntax error")
    kind, rest = args[0].lower(), args[1:]
    if kind == "none":
        require_count(rest, 0)
        return _set_clock(session, "0", "0", "0")
    if kind == "absolute":
        require_count(rest, 1)
        return _set_clock(session, rest[0], "0", "0")
    if kind == "byoyomi":
        require_count(rest, 3)
        return _set_clock(session, rest[0], rest[1], "1")
    if kind == "canadian":
        require_count(rest, 3)
        return _set_clock(session, *rest)
    raise GtpError("syntax error")  # an unknown time system


def time_left(session, args):
    require_count(args, 3)
    colour = colour_arg(args[0], "syntax error")
    try:
        session.clock.set_left(colour, float_arg(args[1]), int_arg(args[2]))
    except ValueError:
        raise GtpError("syntax error") from None
    return ""


# -- end of game ----------------------------------------------------------------------------------------------
def final_score(session, args):
    """Area score with komi, as GNU Go writes it: ``B+3.5``, ``W+0.5`` or ``0``.  Tromp-Taylor on the board
    as it stands; once both players have passed, stones the Player judges dead are removed first."""
    game = session.game
    score = session.player_after_warmup().settled_score(game) if game.is_over() else game.score()
    if score > 0:
        return f"B+{score:.1f}"
    if score < 0:
        return f"W+{-score:.1f}"
    return "0"


def final_status_list(session, args):
    """``alive``, ``dead`` or ``seki`` stones, judged by the Player from playout ownership."""
    require_count(args, 1)
    wanted = args[0].lower()
    if wanted not in ("alive", "dead", "seki"):
        raise GtpError("syntax error")
    return vertices_text(session.player_after_warmup().stone_status(session.game) == wanted, session.size)


def ownership(session, args):
    """``jaxgo-ownership [playouts]``: ``size`` lines of ``size`` numbers in [-1, 1] (+1 = Black), top row
    first."""
    from jaxgo.search.player import OWNERSHIP_PLAYOUTS

    require_count(args, 0, 1)
    playouts = (int_arg(args[0], 1, MAX_OWNERSHIP_PLAYOUTS, f"playouts must be 1..{MAX_OWNERSHIP_PLAYOUTS}")
                if args else OWNERSHIP_PLAYOUTS)
    return board_rows(session.player_after_warmup().ownership(session.game, playouts), session.size)


# -- search information ---------------------------------------------------------------------------------------
def search_stats(session, args):
    """The last search -- an analysis (lz-analyze, kata-analyze, *-genmove_analyze: its latest report) or a
    genmove, whichever came last: playouts, seconds, win rate (side to move) and principal variation."""
    source = "genmove"
    result = session.player.last_result
    if session.analysis.last is not None:
        result, source = session.analysis.last
    if result is None:
        return "no search yet"
    pv = " ".join(point_to_gtp(m, session.size) for m in result.pv)
    return (f"{source}: playouts {result.playouts} seconds {result.seconds:.2f} win rate {result.win_rate:.3f} "
            f"pv {pv}")


def config_lines(settings: dict) -> str:
    """A SearchConfig as a dict (``config.to_dict()``) -> ``key value`` lines, ``none`` for None."""
    return "\n".join(f"{key} {'none' if value is None else value}" for key, value in settings.items())


def search_config(session, args):
    """``jaxgo-search_config``: GoGui's parameter dialog (``param`` analyze command): the move budget and every
    SearchConfig field, one typed line each (``gogui_param_lines``); ``jaxgo-search_config KEY VALUE`` sets one
    (``jaxgo.gtp.settings.set_param``, with the dialog's names ``playouts_per_move`` and ``seconds_per_move``
    for the budget)."""
    require_count(args, 0, 2)
    if args:
        set_param(session, GOGUI_NAMES.get(args[0], args[0]), args[1])
        return ""
    return gogui_param_lines(session)


# GoGui shows a key with "_" as spaces and a capital ("playout_policy heavy" reads "Playout policy: heavy"); the
# budget's GTP names (maxPlayouts, maxTime) get names that say what they count.
GOGUI_NAMES = {"playouts_per_move": "maxPlayouts", "seconds_per_move": "maxTime"}
GOGUI_SHOWN = {ours: shown for shown, ours in GOGUI_NAMES.items()}


def gogui_param_lines(session) -> str:
    """``[type] key value`` lines (GoGui's param format): ``[bool]`` switches as 0 / 1, ``[list/a/b]`` choices,
    ``[string]`` numbers and paths ("none" for no value); the move budget first."""
    from jaxgo.search import config

    choices = {"strategy": config.STRATEGIES, "playout_policy": config.PLAYOUT_POLICIES,
               "late_playout_policy": config.PLAYOUT_POLICIES + ("none",),
               "backend": config.PLAYOUT_BACKENDS}
    playouts, seconds = session.budget
    rows = [("playouts_per_move", "[string]", playouts), ("seconds_per_move", "[string]", seconds)]
    for key, value in session.config.to_dict().items():
        if isinstance(value, bool):
            kind, value = "[bool]", int(value)
        elif key in choices:
            kind = "[list/" + "/".join(choices[key]) + "]"
        else:
            kind = "[string]"
        rows.append((GOGUI_SHOWN.get(key, key), kind, value))
    return "\n".join(f"{kind} {key} {'none' if value is None else value}" for key, kind, value in rows)


COMMANDS = {
    "genmove": genmove,
    "reg_genmove": reg_genmove,
    "kgs-genmove_cleanup": genmove_cleanup,
    "fixed_handicap": fixed_handicap,
    "place_free_handicap": place_free_handicap,
    "set_free_handicap": set_free_handicap,
    "time_settings": time_settings,
    "kgs-time_settings": kgs_time_settings,
    "time_left": time_left,
    "final_score": final_score,
    "final_status_list": final_status_list,
    "jaxgo-ownership": ownership,
    "jaxgo-search_stats": search_stats,
    "jaxgo-search_config": search_config,
}
