"""GTP version 2 framing, argument parsing and the command dispatcher (minigo's ``gtp_engine.py``).

Framing (GTP v2 specification, section 3): control characters other than HT and LF are removed, ``#`` starts a
comment, HT becomes a space, empty lines are ignored; a command is ``[id] name [args]``; the answer is
``=[id] result`` or ``?[id] message`` followed by one empty line, and never holds an empty line inside.
Error texts are the specification's (``unknown command``, ``illegal move``, ``unacceptable size``,
``syntax error``, ``cannot undo``, ``cannot load file``, ``cannot score``) and, for commands outside the
standard set, GNU Go's (``invalid color``, ``invalid coordinate``).

Numbers and vertices are ASCII only (``A١`` is not ``A1``; ``1_000`` is not a number); floats must be finite.
Streamed responses (live analysis) are written through ``StreamedReply``, which drops empty lines, so a reply
never ends early whatever its lines hold.

A handler is ``handler(session, args: list[str]) -> str | None``; it raises ``GtpError(message)`` for a failure
response.  ``Dispatcher(session, commands)`` answers lines with an explicit registry ``{name: handler}``; the
session needs ``quit`` (bool) and ``debug(text)``, and gets ``command_names`` (for ``list_commands``).
"""

from __future__ import annotations

import re

import numpy as np

from jaxgo.go.coords import gtp_to_point, parse_color, point_to_gtp


class GtpError(Exception):
    """A failure response; the message is sent after ``?``."""


# -- framing --------------------------------------------------------------------------------------------------
def preprocess(line: str) -> str:
    """GTP preprocessing of one line: cut the comment, HT -> space, drop other control characters, strip."""
    line = line.split("#", 1)[0].replace("\t", " ")
    return "".join(ch for ch in line if ch == "\n" or not (ord(ch) < 32 or ord(ch) == 127)).strip()


def parse_command(text: str) -> tuple[str, str | None, list[str]]:
    """(id, name, args) of a preprocessed, non-empty line; name is None for an id without a command."""
    words = text.split()
    ident = ""
    if words[0].isascii() and words[0].isdigit():
        ident = words.pop(0)
    if not words:
        return ident, None, []
    return ident, words[0], words[1:]


def format_response(ok: bool, result: str, ident: str = "") -> str:
    """``=id result`` / ``?id message`` and the empty line; an empty line inside would end it early, so it
    becomes a single space."""
    lines = [line.rstrip() for line in result.split("\n")]
    body = "\n".join([lines[0]] + [line if line else " " for line in lines[1:]])
    return f"{'=' if ok else '?'}{ident} {body}\n\n"


# -- arguments ------------------------------------------------------------------------------------------------
def require_count(args: list[str], *allowed: int) -> None:
    """``syntax error`` unless there are exactly one of ``allowed`` arguments."""
    if len(args) not in allowed:
        raise GtpError("syntax error")


def colour_arg(word: str, message: str = "invalid color") -> int:
    """BLACK / WHITE from ``b``, ``black``, ``w``, ``white`` (any case)."""
    try:
        return parse_color(word)
    except ValueError:
        raise GtpError(message) from None


INTEGER = re.compile(r"[+-]?[0-9]+")
DECIMAL = re.compile(r"[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?")


def vertex_arg(word: str, size: int, message: str = "invalid coordinate") -> int:
    """A point (pass = size²) from a GTP vertex on a ``size`` board (ASCII letters and digits only)."""
    if not word.isascii():
        raise GtpError(message)
    try:
        return gtp_to_point(word, size)
    except ValueError:
        raise GtpError(message) from None


def is_integer(word: str) -> bool:
    """Whether ``word`` is an ASCII decimal integer with an optional sign."""
    return INTEGER.fullmatch(word) is not None


def int_arg(word: str, low: int | None = None, high: int | None = None, message: str = "syntax error") -> int:
    """An ASCII decimal integer, in ``[low, high]`` when given (else GtpError ``message``)."""
    if not is_integer(word):
        raise GtpError("syntax error")
    try:
        value = int(word)
    except ValueError:  # more digits than Python converts
        raise GtpError("syntax error") from None
    if (low is not None and value < low) or (high is not None and value > high):
        raise GtpError(message)
    return value


def float_arg(word: str, bound: float | None = None, message: str = "syntax error") -> float:
    """A finite ASCII decimal number (``nan``, ``inf``, ``1_0``, non-ASCII digits: syntax errors), with
    ``|value| <= bound`` when given (else GtpError ``message``)."""
    if DECIMAL.fullmatch(word) is None:
        raise GtpError("syntax error")
    value = float(word)
    if not np.isfinite(value):
        raise GtpError("syntax error")
    if bound is not None and abs(value) > bound:
        raise GtpError(message)
    return value


def vertices_text(mask, size: int) -> str:
    """The points set in ``mask`` (bool [P]) as GTP vertices, top row first."""
    return " ".join(point_to_gtp(int(p), size) for p in np.flatnonzero(mask))


def board_rows(values, size: int) -> str:
    """A per-point map (float [P] or [size, size]) as ``size`` lines of ``size`` numbers with two decimals,
    top row first (GoGui's dboard layout)."""
    values = np.asarray(values, np.float64).reshape(size, size)
    return "\n".join(" ".join(f"{v:.2f}" for v in row) for row in values)


# -- streamed responses ---------------------------------------------------------------------------------------
def stream_lines(text: str) -> list[str]:
    """The non-empty lines of ``text`` (right-stripped): what a streamed reply may hold."""
    return [line.rstrip() for line in text.split("\n") if line.strip()]


class StreamedReply:
    """One response written as it is produced: ``=[id]`` at once, then body lines, then the empty line that
    ends it.  Empty lines are dropped (an empty line inside would end the response early for the client)."""

    def __init__(self, out, header: str):
        self.out = out
        self.header = header.rstrip()
        self.open = False
        self.lines_written = 0

    def start(self) -> None:
        self.out.write(self.header + "\n")
        self.out.flush()
        self.open = True

    def write(self, text: str | None) -> None:
        """Write the non-empty lines of ``text`` (None and empty text write nothing)."""
        lines = stream_lines(text) if text else []
        if lines:
            self.out.write("\n".join(lines) + "\n")
            self.out.flush()
            self.lines_written += len(lines)

    def finish(self) -> None:
        if self.open:
            self.out.write("\n")
            self.out.flush()
            self.open = False


# -- dispatch -------------------------------------------------------------------------------------------------
class Dispatcher:
    """Answers GTP lines for one session with the handlers of ``commands`` (name -> handler(session, args))."""

    def __init__(self, session, commands: dict):
        self.session = session
        self.registry = dict(commands)
        session.command_names = tuple(sorted(self.registry))

    @property
    def quit(self) -> bool:
        return self.session.quit

    def commands(self) -> list[str]:
        return sorted(self.registry)

    def handle(self, line: str) -> str | None:
        """The full response (ending with an empty line) to one input line; None for a line to ignore."""
        text = preprocess(line)
        if not text:
            return None
        ident, name, args = parse_command(text)
        if name is None:
            return format_response(False, "syntax error", ident)
        ok, result = self.execute(name, args)
        return format_response(ok, result, ident)

    def execute(self, name: str, args: list[str]) -> tuple[bool, str]:
        """(success, response text) of one parsed command; an unexpected exception is reported, not fatal."""
        handler = self.registry.get(name)
        if handler is None:
            return False, "unknown command"
        try:
            result = handler(self.session, args)
        except GtpError as exc:
            return False, str(exc)
        except Exception as exc:  # keep serving after an engine bug, but say what happened on stderr
            self.session.debug(f"internal error in {name}: {exc!r}")
            return False, f"internal error: {exc}"
        return True, "" if result is None else str(result)

    def run_script(self, text: str) -> str:
        """All the responses to a multi-line command text, stopping after ``quit``."""
        out = []
        for line in text.splitlines():
            response = self.handle(line)
            if response is not None:
                out.append(response)
            if self.quit:
                break
        return "".join(out)
