"""``jaxgo gtp``: a Go Text Protocol (version 2) engine on stdin/stdout.

``GtpEngine`` holds the game and answers one command line at a time (``engine.handle(line)`` returns the full
response text, ``engine.run_script(text)`` a whole session) so tests drive it without pipes; ``main`` is the
stdin/stdout loop.  Handlers are the ``cmd_<name>`` methods, found automatically: each takes the argument
words and returns the response text, or raises ``GtpError(message)`` for a failure response.

Framing follows the GTP v2 specification: control characters other than HT and LF are removed, ``#`` starts a
comment, HT becomes a space, empty lines are ignored; a command is ``[id] name [args]``; the answer is
``=[id] result`` or ``?[id] message`` followed by one empty line.  Error texts are the specification's
(``unknown command``, ``illegal move``, ``unacceptable size``, ``syntax error``, ``cannot undo``,
``cannot load file``, ``cannot score``) and, for commands outside the standard set, GNU Go's
(``invalid color``, ``invalid coordinate``).  Debug output goes to stderr only.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

import numpy as np

from jaxgo import __version__
from jaxgo.config import KO_RULES, Rules
from jaxgo.display import board_text
from jaxgo.coords import BLACK, WHITE, gtp_to_point, parse_color, point_to_gtp

PROTOCOL_VERSION = "2"
ENGINE_NAME = "jaxgo"

# Fuego's `go_param_rules ko_rule` values -> our ko rules (Fuego's "superko" is situational superko).
FUEGO_KO_RULES = {"simple": "simple", "superko": "situational", "pos_superko": "positional"}
FUEGO_KO_NAMES = {ours: theirs for theirs, ours in FUEGO_KO_RULES.items()}


class GtpError(Exception):
    """A failure response; the message is sent after ``?``."""


# Modules that add GTP commands without touching this file: each defines
# ``COMMANDS: dict[str, Callable[[GtpEngine, list[str]], str | None]]`` (raise GtpError for a failure reply).
EXTENSION_MODULES = ("jaxgo.search.proof.gtp_commands",)


def load_extensions() -> dict:
    """Command name -> handler from every importable extension module (missing modules are skipped)."""
    import importlib

    commands = {}
    for module_name in EXTENSION_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue
            raise
        commands.update(getattr(module, "COMMANDS", {}))
    return commands


class GtpEngine:
    """The GTP command set over one ``jaxgo.game.Game``."""

    def __init__(self, rules: Rules | None = None, seed: int | None = None, log=None):
        self.rules = rules if rules is not None else Rules()
        self.rng = np.random.default_rng(seed)
        self.log = log  # a text stream for debug output (stderr in main), or None
        self.quit = False
        self._game = None
        self.extensions = load_extensions()

    # -- game -----------------------------------------------------------------------------------------------
    @property
    def game(self):
        """The current game, created on first use (importing JAX only when needed)."""
        if self._game is None:
            from jaxgo.game import Game

            self._game = Game(self.rules)
        return self._game

    @game.setter
    def game(self, value):
        self._game = value
        self.rules = value.rules

    @property
    def size(self) -> int:
        return self.rules.size

    def _set_rules(self, **changes) -> None:
        """Change komi / ko rule / suicide in place, keeping the position and its history."""
        self.rules = dataclasses.replace(self.rules, **changes)
        if self._game is not None:
            self._game.rules = self.rules

    def debug(self, text: str) -> None:
        if self.log is not None:
            print(text, file=self.log, flush=True)

    # -- framing --------------------------------------------------------------------------------------------
    @staticmethod
    def preprocess(line: str) -> str:
        """GTP preprocessing of one line: drop control characters but HT/LF, cut comments, HT -> space."""
        line = line.split("#", 1)[0]
        line = line.replace("\t", " ")
        return "".join(ch for ch in line if ch == "\n" or not (ord(ch) < 32 or ord(ch) == 127)).strip()

    def handle(self, line: str) -> str | None:
        """The full response (ending with an empty line) to one input line; None for a line to ignore."""
        text = self.preprocess(line)
        if not text:
            return None
        words = text.split()
        ident = ""
        if words[0].isascii() and words[0].isdigit():
            ident = words.pop(0)
            if not words:
                return f"?{ident} syntax error\n\n"
        name, args = words[0], words[1:]
        ok, result = self.execute(name, args)
        return self.format_response(ok, result, ident)

    @staticmethod
    def format_response(ok: bool, result: str, ident: str = "") -> str:
        # A response may not contain an empty line: that would end it early.
        lines = [ln.rstrip() for ln in result.split("\n")]
        body = "\n".join([lines[0]] + [ln if ln else " " for ln in lines[1:]])
        return f"{'=' if ok else '?'}{ident} {body}\n\n"

    def execute(self, name: str, args: list[str]) -> tuple[bool, str]:
        """(success, response text) for one parsed command."""
        handler = getattr(self, f"cmd_{name}", None) if name.isidentifier() else None
        if handler is None and name in self.extensions:
            handler = lambda args: self.extensions[name](self, args)  # noqa: E731
        if handler is None:
            return False, "unknown command"
        try:
            result = handler(args)
        except GtpError as exc:
            return False, str(exc)
        except Exception as exc:  # keep serving after an engine bug, but say what happened on stderr
            self.debug(f"internal error in {name}: {exc!r}")
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

    def commands(self) -> list[str]:
        own = {name[4:] for name in dir(self) if name.startswith("cmd_") and callable(getattr(self, name))}
        return sorted(own | set(self.extensions))

    # -- argument parsing -----------------------------------------------------------------------------------
    @staticmethod
    def _count(args: list[str], *allowed: int) -> None:
        if len(args) not in allowed:
            raise GtpError("syntax error")

    @staticmethod
    def _color(word: str, message: str = "invalid color") -> int:
        try:
            return parse_color(word)
        except ValueError:
            raise GtpError(message) from None

    def _vertex(self, word: str, message: str = "invalid coordinate") -> int:
        try:
            return gtp_to_point(word, self.size)
        except ValueError:
            raise GtpError(message) from None

    def _vertices(self, mask) -> str:
        return " ".join(point_to_gtp(int(p), self.size) for p in np.flatnonzero(mask))

    # -- administrative commands ----------------------------------------------------------------------------
    def cmd_protocol_version(self, args):
        return PROTOCOL_VERSION

    def cmd_name(self, args):
        return ENGINE_NAME

    def cmd_version(self, args):
        return __version__

    def cmd_known_command(self, args):
        self._count(args, 1)
        return "true" if args[0] in self.commands() else "false"

    def cmd_list_commands(self, args):
        return "\n".join(self.commands())

    def cmd_quit(self, args):
        self.quit = True
        return ""

    # -- setup ----------------------------------------------------------------------------------------------
    def cmd_boardsize(self, args):
        self._count(args, 1)
        try:
            size = int(args[0])
        except ValueError:
            raise GtpError("syntax error") from None
        try:
            rules = dataclasses.replace(self.rules, size=size)
        except ValueError:
            raise GtpError("unacceptable size") from None
        self.rules = rules
        self._game = None  # a fresh, empty board of the new size
        return ""

    def cmd_clear_board(self, args):
        if self._game is not None:
            self._game.clear()
        return ""

    def cmd_komi(self, args):
        self._count(args, 1)
        try:
            komi = float(args[0])
        except ValueError:
            raise GtpError("syntax error") from None
        if not np.isfinite(komi):
            raise GtpError("syntax error")
        self._set_rules(komi=komi)
        return ""

    def cmd_go_param_rules(self, args):
        """Fuego's rules parameters: no arguments lists them; ``ko_rule simple|superko|pos_superko``,
        ``allow_suicide 0|1`` set them (the position and its history are kept)."""
        if not args:
            return (f"allow_suicide {int(self.rules.suicide)}\n"
                    f"ko_rule {FUEGO_KO_NAMES[self.rules.ko_rule]}")
        self._count(args, 2)
        key, value = args
        if key == "ko_rule":
            if value in FUEGO_KO_RULES:
                self._set_rules(ko_rule=FUEGO_KO_RULES[value])
            elif value in KO_RULES:
                self._set_rules(ko_rule=value)
            else:
                raise GtpError(f"invalid ko_rule {value} (simple, superko or pos_superko)")
        elif key == "allow_suicide":
            if value not in ("0", "1"):
                raise GtpError("syntax error")
            self._set_rules(suicide=value == "1")
        else:
            raise GtpError(f"unknown parameter: {key}")
        return ""

    def cmd_loadsgf(self, args):
        """``loadsgf FILE [N]``: the position before move N (all moves without N); N may also be a vertex
        (play until the first move there), like GNU Go."""
        from jaxgo.sgf import SGFError, load_sgf, replay

        self._count(args, 1, 2)
        try:
            record = load_sgf(args[0])
        except SGFError as exc:
            self.debug(f"loadsgf: {exc}")
            raise GtpError("cannot load file") from None
        move_number = None
        if len(args) == 2:
            if args[1].isdigit():
                move_number = int(args[1])
                if move_number < 1:
                    raise GtpError("syntax error")
            else:
                try:
                    target = gtp_to_point(args[1], record.size)
                except ValueError:
                    raise GtpError("syntax error") from None
                numbers = [i for i, (_, m) in enumerate(record.moves, start=1) if m == target]
                move_number = numbers[0] if numbers else None
        try:
            game = replay(record, self.rules, move_number)
        except SGFError as exc:
            self.debug(f"loadsgf: {exc}")
            raise GtpError("cannot load file") from None
        self.game = game
        return ""

    # -- play -----------------------------------------------------------------------------------------------
    def cmd_play(self, args):
        from jaxgo.game import IllegalMove

        self._count(args, 2)
        color = self._color(args[0], "syntax error")
        move = self._vertex(args[1], "syntax error")
        try:
            self.game.play(color, move)
        except IllegalMove as exc:
            self.debug(f"play {args[0]} {args[1]}: {exc.reason}")
            raise GtpError("illegal move") from None
        return ""

    def cmd_genmove(self, args):
        """A uniformly random legal move (pass only when there is none), played on the board."""
        self._count(args, 1)
        color = self._color(args[0], "syntax error")
        legal = self.game.legal_moves(color)[:-1]
        candidates = np.flatnonzero(legal)
        move = int(self.rng.choice(candidates)) if len(candidates) else self.game.size ** 2
        self.game.play(color, move)
        return point_to_gtp(move, self.size)

    def cmd_undo(self, args):
        """Take back the last move; setup stones (handicap, SGF AB/AW) are not moves and stay."""
        if not self.game.moves:
            raise GtpError("cannot undo")
        try:
            self.game.undo()
        except IndexError:
            raise GtpError("cannot undo") from None
        return ""

    # -- queries --------------------------------------------------------------------------------------------
    def cmd_is_legal(self, args):
        self._count(args, 2)
        color = self._color(args[0])
        move = self._vertex(args[1])
        return "1" if self.game.is_legal(color, move) else "0"

    def cmd_all_legal(self, args):
        self._count(args, 1)
        color = self._color(args[0])
        return self._vertices(self.game.legal_moves(color)[:-1])

    def cmd_list_stones(self, args):
        self._count(args, 1)
        color = self._color(args[0])
        return self._vertices(self.game.board().reshape(-1) == color)

    def cmd_captures(self, args):
        self._count(args, 1)
        return str(self.game.captures(self._color(args[0])))

    def cmd_final_score(self, args):
        """Tromp-Taylor area score with komi, as GNU Go writes it: ``B+3.5``, ``W+0.5`` or ``0``."""
        score = self.game.score()
        if score > 0:
            return f"B+{score:.1f}"
        if score < 0:
            return f"W+{-score:.1f}"
        return "0"

    def cmd_showboard(self, args):
        last = self.game.moves[-1][1] if self.game.moves else None
        to_play = "black" if self.game.to_play == BLACK else "white"
        status = (f"captures: black {self.game.captures(BLACK)}, white {self.game.captures(WHITE)}; "
                  f"{to_play} to play; komi {self.rules.komi:g}; ko rule {self.rules.ko_rule}")
        return "\n" + board_text(self.game.board(), last) + "\n" + status


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jaxgo gtp", description="Go Text Protocol (v2) engine on stdin/stdout")
    parser.add_argument("--size", type=int, default=19, help="board size (default 19)")
    parser.add_argument("--komi", type=float, default=7.5, help="komi (default 7.5)")
    parser.add_argument("--rules", choices=KO_RULES, default="positional", help="ko rule (default positional)")
    parser.add_argument("--suicide", action="store_true", help="allow multi-stone suicide")
    parser.add_argument("--seed", type=int, default=None, help="seed of genmove's random choice")
    parser.add_argument("--quiet", action="store_true", help="no debug output on stderr")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        rules = Rules(size=args.size, komi=args.komi, ko_rule=args.rules, suicide=args.suicide)
    except ValueError as exc:
        print(f"jaxgo gtp: {exc}", file=sys.stderr)
        return 2
    engine = GtpEngine(rules, seed=args.seed, log=None if args.quiet else sys.stderr)
    stdout = sys.stdout
    # Read bytes so that a stray non-UTF-8 byte cannot end the session.
    stdin = getattr(sys.stdin, "buffer", None)
    for raw in stdin if stdin is not None else sys.stdin:
        line = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        response = engine.handle(line)
        if response is not None:
            stdout.write(response)
            stdout.flush()
        if engine.quit:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
