"""The GTP rules shell: administration, board setup, moves, queries and SGF (no search).

``protocol_version``, ``name``, ``version``, ``known_command``, ``list_commands``, ``quit``, ``boardsize``,
``clear_board``, ``komi``, ``go_param_rules`` (Fuego's syntax), ``loadsgf FILE [N|VERTEX]`` (GNU Go's
semantics), ``play``, ``undo``, ``is_legal``, ``all_legal``, ``list_stones``, ``captures``, ``showboard``,
``printsgf [FILE]``.  Every handler is ``handler(session, args)`` (``jaxgo.gtp.session.GtpSession``).

Hostile input: ``komi`` is bounded (``MAX_KOMI``); ``loadsgf`` reads only regular files of at most
``MAX_SGF_BYTES`` (``/dev/zero`` or a FIFO answers ``cannot load file`` at once), of at most
``jaxgo.go.sgf.MAX_SGF_NODES`` nodes and ``MAX_SGF_MOVES`` main-line moves (the error names the limit), and
``printsgf`` writes only to regular files, never waiting on a FIFO, through a temporary file renamed over the
target (a failed write leaves the old file whole).
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat

from jaxgo import __version__
from jaxgo.go.config import KO_RULES
from jaxgo.go.coords import BLACK, WHITE
from jaxgo.go.display import board_text
from jaxgo.go.sgf import MAX_KOMI
from jaxgo.gtp.protocol import (
    GtpError,
    colour_arg,
    float_arg,
    int_arg,
    is_integer,
    require_count,
    vertex_arg,
    vertices_text,
)

PROTOCOL_VERSION = "2"
ENGINE_NAME = "jaxgo"  # not "KataGo...": Lizzie then reads lz-analyze's integer format (jaxgo.gtp.analysis)
MAX_SGF_BYTES = 8 << 20

# Fuego's `go_param_rules ko_rule` values -> our ko rules (Fuego's "superko" is situational superko).
FUEGO_KO_RULES = {"simple": "simple", "superko": "situational", "pos_superko": "positional"}
FUEGO_KO_NAMES = {ours: theirs for theirs, ours in FUEGO_KO_RULES.items()}


# -- administration -------------------------------------------------------------------------------------------
def protocol_version(session, args):
    return PROTOCOL_VERSION


def name(session, args):
    return ENGINE_NAME


def gtp_version(package_version: str = __version__) -> str:
    """``version``'s answer: jaxgo's version as ``MAJOR.N`` with N = 100 x (minor + 1) + patch (0.1 -> "0.200",
    0.2.3 -> "0.303", 1.0 -> "1.100"), so N grows with every release and is never below 100.

    Why: Lizzie (0.7.4) reads ``Integer.parseInt(answer.split("\\.")[1])`` of any engine whose ``name`` does
    not start with "KataGo" and, when that number is below 15, opens a warning box while it holds its engine
    lock, after which it stays on "Loading..." for good (tests/gtp/test_clients.py runs Lizzie's own check).
    The name stays "jaxgo": Lizzie then uses lz-analyze, which jaxgo answers in Leela Zero's format.
    """
    parts = [int(part) for part in re.findall(r"\d+", package_version)[:3]] + [0, 0, 0]
    return f"{parts[0]}.{100 * (parts[1] + 1) + parts[2]}"


def version(session, args):
    return gtp_version()


def known_command(session, args):
    require_count(args, 1)
    return "true" if args[0] in session.command_names else "false"


def list_commands(session, args):
    return "\n".join(session.command_names)


def quit_session(session, args):
    session.quit = True
    return ""


# -- setup ----------------------------------------------------------------------------------------------------
def boardsize(session, args):
    """A fresh, empty board of the new size (the rest of the rules kept)."""
    require_count(args, 1)
    size = int_arg(args[0])
    try:
        dataclasses.replace(session.rules, size=size)
    except ValueError:
        raise GtpError("unacceptable size") from None
    session.new_board(size)
    return ""


def clear_board(session, args):
    session.clear_board()
    return ""


def komi(session, args):
    require_count(args, 1)
    session.set_rules(komi=float_arg(args[0], MAX_KOMI, f"komi out of range (at most {MAX_KOMI:g} points)"))
    return ""


def go_param_rules(session, args):
    """Fuego's rules parameters: no arguments lists them; ``ko_rule simple|superko|pos_superko``,
    ``allow_suicide 0|1`` set them (the position and its history are kept)."""
    if not args:
        return f"allow_suicide {int(session.rules.suicide)}\nko_rule {FUEGO_KO_NAMES[session.rules.ko_rule]}"
    require_count(args, 2)
    key, value = args
    if key == "ko_rule":
        if value in FUEGO_KO_RULES:
            session.set_rules(ko_rule=FUEGO_KO_RULES[value])
        elif value in KO_RULES:
            session.set_rules(ko_rule=value)
        else:
            raise GtpError(f"invalid ko_rule {value} (simple, superko or pos_superko)")
    elif key == "allow_suicide":
        if value not in ("0", "1"):
            raise GtpError("syntax error")
        session.set_rules(suicide=value == "1")
    else:
        raise GtpError(f"unknown parameter: {key}")
    return ""


def loadsgf(session, args):
    """``loadsgf FILE [N]``: the position before move N (all moves without N); N may also be a vertex
    (play until the first move there), like GNU Go."""
    from jaxgo.go.sgf import SGFError, SGFLimitError, load_sgf, replay

    require_count(args, 1, 2)
    try:
        record = load_sgf(read_regular_file(args[0], MAX_SGF_BYTES))
    except SGFLimitError as exc:
        raise GtpError(f"cannot load file: {exc}") from None
    except (SGFError, OSError) as exc:
        session.debug(f"loadsgf: {exc}")
        raise GtpError("cannot load file") from None
    move_number = _sgf_move_number(record, args[1]) if len(args) == 2 else None
    try:
        game = replay(record, session.rules, move_number)
    except SGFError as exc:
        session.debug(f"loadsgf: {exc}")
        raise GtpError("cannot load file") from None
    session.game = game
    session.reset_search()
    return ""


def read_regular_file(path: str, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; OSError for anything else (a FIFO, a device,
    a directory, a larger file), without ever blocking on the open."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        if info.st_size > limit:
            raise OSError(f"{path} is larger than {limit} bytes")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise OSError(f"{path} is larger than {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_regular_file(path: str, text: str) -> None:
    """Replace a regular file (or create a new one) with ``text``, atomically: a temporary file beside it is
    written, then renamed over it, so a failed write (a full disk) leaves the old file as it was.  OSError for
    a FIFO, a device or a directory, without opening it (never blocking); a symbolic link is followed and
    its target replaced."""
    from jaxgo.util.files import atomic_write_text

    target = os.path.realpath(path)
    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise OSError(f"{path} is not a regular file")
    atomic_write_text(target, text)
    if info is not None:
        os.chmod(target, stat.S_IMODE(info.st_mode))


def _sgf_move_number(record, word: str) -> int | None:
    """loadsgf's second argument: a move number >= 1, or the number of the first move at a vertex."""
    if is_integer(word):
        return int_arg(word, 1, None)
    target = vertex_arg(word, record.size, "syntax error")
    numbers = [i for i, (_, move) in enumerate(record.moves, start=1) if move == target]
    return numbers[0] if numbers else None


# -- moves ----------------------------------------------------------------------------------------------------
def play(session, args):
    require_count(args, 2)
    colour = colour_arg(args[0], "syntax error")
    move = vertex_arg(args[1], session.size, "syntax error")
    reason = session.play(colour, move)
    if reason is not None:
        session.debug(f"play {args[0]} {args[1]}: {reason}")
        raise GtpError("illegal move")
    return ""


def undo(session, args):
    """Take back the last move; setup stones (handicap, SGF AB/AW) are not moves and stay."""
    if not session.undo():
        raise GtpError("cannot undo")
    return ""


# -- queries --------------------------------------------------------------------------------------------------
def is_legal(session, args):
    require_count(args, 2)
    colour = colour_arg(args[0])
    move = vertex_arg(args[1], session.size)
    return "1" if session.game.is_legal(colour, move) else "0"


def all_legal(session, args):
    require_count(args, 1)
    colour = colour_arg(args[0])
    return vertices_text(session.game.legal_moves(colour)[:-1], session.size)


def list_stones(session, args):
    require_count(args, 1)
    colour = colour_arg(args[0])
    return vertices_text(session.game.board().reshape(-1) == colour, session.size)


def captures(session, args):
    require_count(args, 1)
    return str(session.game.captures(colour_arg(args[0])))


def showboard(session, args):
    game = session.game
    last = game.moves[-1][1] if game.moves else None
    to_play = "black" if game.to_play == BLACK else "white"
    status = (f"captures: black {game.captures(BLACK)}, white {game.captures(WHITE)}; "
              f"{to_play} to play; komi {session.rules.komi:g}; ko rule {session.rules.ko_rule}")
    return "\n" + board_text(game.board(), last) + "\n" + status


def printsgf(session, args):
    """The game as SGF; with a file name, written there instead."""
    from jaxgo.go.sgf import game_to_sgf

    require_count(args, 0, 1)
    text = game_to_sgf(session.game)
    if not args:
        return text.strip()
    try:
        write_regular_file(args[0], text)
    except OSError:
        raise GtpError("cannot write file") from None
    return ""


COMMANDS = {
    "protocol_version": protocol_version,
    "name": name,
    "version": version,
    "known_command": known_command,
    "list_commands": list_commands,
    "quit": quit_session,
    "boardsize": boardsize,
    "clear_board": clear_board,
    "komi": komi,
    "go_param_rules": go_param_rules,
    "loadsgf": loadsgf,
    "play": play,
    "undo": undo,
    "is_legal": is_legal,
    "all_legal": all_legal,
    "list_stones": list_stones,
    "captures": captures,
    "showboard": showboard,
    "printsgf": printsgf,
}
