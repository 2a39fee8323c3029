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

Moves come from ``jaxgo.search.mcts`` (``--strategy``: uct, rave, mc, amaf, pp, depth2, or random); the budget
is ``--playouts`` per move, ``--seconds`` per move, or the GTP clock (``time_settings`` / ``time_left`` /
``kgs-time_settings``).  Methods ``cmd_a_b`` whose GTP name has a dash are listed in ``COMMAND_NAMES``.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

import numpy as np

from jaxgo import __version__
from jaxgo.go.config import KO_RULES, Rules
from jaxgo.go.display import board_text
from jaxgo.go.coords import BLACK, WHITE, gtp_to_point, parse_color, point_to_gtp

PROTOCOL_VERSION = "2"
ENGINE_NAME = "jaxgo"

# Fuego's `go_param_rules ko_rule` values -> our ko rules (Fuego's "superko" is situational superko).
FUEGO_KO_RULES = {"simple": "simple", "superko": "situational", "pos_superko": "positional"}
FUEGO_KO_NAMES = {ours: theirs for theirs, ours in FUEGO_KO_RULES.items()}


STRATEGIES = ("uct", "rave", "mc", "amaf", "pp", "depth2", "random")
DEFAULT_PLAYOUTS = 3000
RESIGN = -1
# Methods whose GTP name has a dash (``cmd_kgs_genmove_cleanup`` answers ``kgs-genmove_cleanup``).
COMMAND_NAMES = {"kgs_genmove_cleanup": "kgs-genmove_cleanup", "kgs_time_settings": "kgs-time_settings",
                 "jaxgo_ownership": "jaxgo-ownership", "gogui_analyze_commands": "gogui-analyze_commands",
                 "jaxgo_search_stats": "jaxgo-search_stats"}


def fixed_handicap_points(size: int, count: int) -> list[int]:
    """GTP's fixed handicap placement (section 4.1.1) as points; ValueError where it is not defined."""
    if count < 2 or size < 7 or (size % 2 == 0 and count > 4) or count > 9 or (size == 7 and count > 4):
        raise ValueError("invalid number of stones")
    edge = 2 if size < 13 else 3
    low, mid, high = edge, size // 2, size - 1 - edge

    def point(col, row_from_bottom):
        return (size - 1 - row_from_bottom) * size + col

    corners = [point(high, high), point(low, low), point(high, low), point(low, high)]
    sides = {"left": point(low, mid), "right": point(high, mid), "top": point(mid, high), "bottom": point(mid, low)}
    centre = point(mid, mid)
    order = {2: corners[:2], 3: corners[:3], 4: corners, 5: corners + [centre],
             6: corners + [sides["left"], sides["right"]], 7: corners + [sides["left"], sides["right"], centre],
             8: corners + [sides["left"], sides["right"], sides["top"], sides["bottom"]],
             9: corners + [sides["left"], sides["right"], sides["top"], sides["bottom"], centre]}
    return order[count]


class GtpError(Exception):
    """A failure response; the message is sent after ``?``."""


# Modules that add GTP commands without touching this file: each defines
# ``COMMANDS: dict[str, Callable[[GtpEngine, list[str]], str | None]]`` (raise GtpError for a failure reply).
EXTENSION_MODULES = ("jaxgo.gtp.proof", "jaxgo.gtp.territory", "jaxgo.gtp.analysis")


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
    """The GTP command set over one ``jaxgo.go.game.Game``."""

    def __init__(self, rules: Rules | None = None, seed: int | None = None, log=None, strategy: str = "rave",
                 playouts: int | None = None, seconds: float | None = None, search_options: dict | None = None):
        self.rules = rules if rules is not None else Rules()
        self.rng = np.random.default_rng(seed)
        self.seed = int(np.random.SeedSequence().entropy % (2 ** 31)) if seed is None else int(seed)
        self.log = log  # a text stream for debug output (stderr in main), or None
        self.quit = False
        self._game = None
        self.extensions = load_extensions()
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}")
        self.strategy = strategy
        # Budget per move: fixed playouts, fixed seconds, or the GTP clock (time_settings / time_left).
        self.playouts = playouts if playouts is not None or seconds is not None else DEFAULT_PLAYOUTS
        self.seconds = seconds
        self.search_options = dict(search_options or {})
        self.time_settings = None  # (main seconds, byo-yomi seconds, byo-yomi stones) once set, main > 0 or byo > 0
        self.time_left = {}  # colour -> (seconds, stones)
        self._searcher = None
        self._searcher_rules = None
        self.last_search = None

    # -- game -----------------------------------------------------------------------------------------------
    @property
    def game(self):
        """The current game, created on first use (importing JAX only when needed)."""
        if self._game is None:
            from jaxgo.go.game import Game

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
        method = name.replace("-", "_")
        if method in COMMAND_NAMES and name != COMMAND_NAMES[method]:
            method = ""  # only the dashed spelling is a command
        elif "-" in name and method not in COMMAND_NAMES:
            method = ""
        handler = getattr(self, f"cmd_{method}", None) if method.isidentifier() else None
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
        own = {COMMAND_NAMES.get(name[4:], name[4:]) for name in dir(self)
               if name.startswith("cmd_") and callable(getattr(self, name))}
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
        from jaxgo.go.sgf import SGFError, load_sgf, replay

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
        from jaxgo.go.game import IllegalMove

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
        """The search's move for the colour (``pass`` or ``resign`` possible), played on the board."""
        self._count(args, 1)
        color = self._color(args[0], "syntax error")
        move = self.generate(color)
        if move == RESIGN:
            return "resign"
        self.game.play(color, move)
        return point_to_gtp(move, self.size)

    def cmd_reg_genmove(self, args):
        """The move ``genmove`` would choose, without playing it."""
        self._count(args, 1)
        color = self._color(args[0], "syntax error")
        move = self.generate(color)
        return "resign" if move == RESIGN else point_to_gtp(move, self.size)

    def cmd_kgs_genmove_cleanup(self, args):
        """Like genmove, but never passes while stones the playouts judge dead are still on the board."""
        self._count(args, 1)
        color = self._color(args[0], "syntax error")
        move = self.generate(color, cleanup=True)
        if move == RESIGN:
            move = self.game.pass_move
        self.game.play(color, move)
        return point_to_gtp(move, self.size)

    # -- search ---------------------------------------------------------------------------------------------
    def searcher(self):
        """The search engine for the current rules (recreated, tree dropped, when the rules change)."""
        from jaxgo.search.mcts import SearchConfig, Searcher

        if self._searcher is None or self._searcher_rules != self.rules:
            config = SearchConfig(strategy=self.strategy if self.strategy != "random" else "rave",
                                  **self.search_options)
            self._searcher = Searcher(self.rules, config, seed=self.seed, log=self.log)
            self._searcher_rules = self.rules
        return self._searcher

    def move_budget(self, color: int) -> tuple[int | None, float | None]:
        """(playouts, seconds) for the next move: the fixed options, or a share of the clock.

        Clock rule: in main time, the time left over max(20, empty points / 2) expected own moves (plus 80% of
        one byo-yomi period's per-stone time when byo-yomi exists); in byo-yomi, 80% of the time left over the
        stones left; never more than 80% of the time left, and at least 0.05 s.
        """
        if self.seconds is not None or self.time_settings is None:
            return self.playouts, self.seconds
        main_time, byo_time, byo_stones = self.time_settings
        left, stones = self.time_left.get(color, (main_time if main_time > 0 else byo_time,
                                                  0 if main_time > 0 else byo_stones))
        if stones > 0:
            budget = 0.8 * left / stones
        else:
            empty = int(np.sum(self.game.board() == 0))
            budget = left / max(20, empty / 2)
            if byo_time > 0 and byo_stones > 0:
                budget += 0.8 * byo_time / byo_stones
        budget = max(0.05, min(budget, 0.8 * left if left > 0 else 0.05))
        return None, budget

    def generate(self, color: int, cleanup: bool = False) -> int:
        """The chosen move for ``color`` (a point, pass, or RESIGN); the board is not changed."""
        game = self.game
        legal = game.legal_moves(color)
        if not legal[:-1].any():
            return game.pass_move
        if self.strategy == "random":
            return int(self.rng.choice(np.flatnonzero(legal[:-1])))
        if color != game.to_play:
            game.set_to_play(color)
        # After the opponent's pass, pass too when ending the game now wins (see passing_wins).
        if not cleanup and game.moves and game.moves[-1][1] == game.pass_move and game.moves[-1][0] == -color:
            if self.passing_wins(color):
                return game.pass_move
        playouts, seconds = self.move_budget(color)
        searcher = self.searcher()
        searcher.forbid_pass = cleanup and self._dead_stones_of(-color)
        try:
            result = searcher.search(game, playouts=playouts, seconds=seconds)
        finally:
            searcher.forbid_pass = False
        self.last_search = result
        move = result.move
        self.debug(f"genmove {'black' if color == BLACK else 'white'}: "
                   f"{'resign' if move == RESIGN else point_to_gtp(move, self.size)} win rate {result.win_rate:.3f} "
                   f"playouts {result.playouts} in {result.seconds:.2f} s "
                   f"pv {' '.join(point_to_gtp(m, self.size) for m in result.pv[:6])}")
        if cleanup and move == RESIGN:
            move = game.pass_move
        return move

    def passing_wins(self, color: int, settled_fraction: float = 0.85) -> bool:
        """Would ``color`` win if the game ended now?  Only on a settled board: the playouts agree on the owner
        (|mean ownership| > 0.5) of at least ``settled_fraction`` of the points, and both the Tromp-Taylor score
        as the board stands and the score with the dead stones removed win for ``color``.  (A lone stone on an
        empty board wins by Tromp-Taylor, but the game is not over.)"""
        if self.game.score() * color <= 0:
            return False
        from jaxgo.go.status import stone_status

        owner = self.ownership().reshape(-1)
        if np.mean(np.abs(owner) > 0.5) < settled_fraction:
            return False
        dead = stone_status(self.game.board().reshape(-1), owner) == "dead"
        return self.settled_score(dead) * color > 0

    def _dead_stones_of(self, color: int) -> bool:
        status = self.stone_status()
        return bool(np.any((status == "dead") & (self.game.board().reshape(-1) == color)))

    def ownership(self, playouts: int = 256) -> np.ndarray:
        """float [size, size] playout ownership (+1 Black, -1 White) of the current position."""
        from jaxgo.search.mcts import ownership_estimate

        return ownership_estimate(self.game, playouts=playouts, seed=self.seed)

    def stone_status(self, playouts: int = 256) -> np.ndarray:
        """str [P] per point: 'alive', 'dead', 'seki' for stones, '' for empty points (``jaxgo.go.status``)."""
        from jaxgo.go.status import stone_status

        return stone_status(self.game.board().reshape(-1), self.ownership(playouts).reshape(-1))

    # -- handicap, time, scoring ----------------------------------------------------------------------------
    def _place_handicap(self, points) -> str:
        if np.any(self.game.board() != 0) or self.game.moves:
            raise GtpError("board not empty")
        self.game.setup_stones(BLACK, points)
        self.game.set_to_play(WHITE)
        return " ".join(point_to_gtp(p, self.size) for p in points)

    def cmd_fixed_handicap(self, args):
        self._count(args, 1)
        try:
            count = int(args[0])
        except ValueError:
            raise GtpError("syntax error") from None
        try:
            points = fixed_handicap_points(self.size, count)
        except ValueError:
            raise GtpError("invalid number of stones") from None
        return self._place_handicap(points)

    def cmd_place_free_handicap(self, args):
        """Free handicap: the fixed pattern where it exists, else the next best star points of a larger one."""
        self._count(args, 1)
        try:
            count = int(args[0])
        except ValueError:
            raise GtpError("syntax error") from None
        if count < 2 or count >= self.size * self.size:
            raise GtpError("invalid number of stones")
        try:
            points = fixed_handicap_points(self.size, min(count, 9))
        except ValueError:
            points = []
        extra = sorted(set(range(self.size * self.size)) - set(points),
                       key=lambda p: (abs(p // self.size - self.size // 2) + abs(p % self.size - self.size // 2),
                                      p))
        points = list(points) + extra[: max(0, count - len(points))]
        points = points[:count]
        return self._place_handicap(points)

    def cmd_set_free_handicap(self, args):
        if len(args) < 2:
            raise GtpError("syntax error")
        points = [self._vertex(word, "syntax error") for word in args]
        if len(set(points)) != len(points) or self.game.pass_move in points:
            raise GtpError("syntax error")
        self._place_handicap(points)
        return ""

    def cmd_time_settings(self, args):
        self._count(args, 3)
        try:
            main_time, byo_time, byo_stones = float(args[0]), float(args[1]), int(args[2])
        except ValueError:
            raise GtpError("syntax error") from None
        if byo_time > 0 and byo_stones == 0:  # GTP: no byo-yomi stones means no time limit
            self.time_settings = None
        elif main_time <= 0 and byo_time <= 0:
            self.time_settings = None
        else:
            self.time_settings = (main_time, byo_time, byo_stones)
        self.time_left = {}
        return ""

    def cmd_kgs_time_settings(self, args):
        """``none`` | ``absolute MAIN`` | ``byoyomi MAIN PERIOD_TIME PERIODS`` | ``canadian MAIN TIME STONES``;
        byo-yomi periods are treated as one period (the per-move share is what matters)."""
        if not args:
            raise GtpError("syntax error")
        kind = args[0].lower()
        try:
            if kind == "none":
                self._count(args, 1)
                return self.cmd_time_settings(["0", "0", "0"])
            if kind == "absolute":
                self._count(args, 2)
                return self.cmd_time_settings([args[1], "0", "0"])
            if kind == "byoyomi":
                self._count(args, 4)
                return self.cmd_time_settings([args[1], args[2], "1"])
            if kind == "canadian":
                self._count(args, 4)
                return self.cmd_time_settings(args[1:4])
        except GtpError:
            raise
        raise GtpError("syntax error")  # an unknown time system

    def cmd_time_left(self, args):
        self._count(args, 3)
        color = self._color(args[0], "syntax error")
        try:
            seconds, stones = float(args[1]), int(args[2])
        except ValueError:
            raise GtpError("syntax error") from None
        self.time_left[color] = (seconds, stones)
        return ""

    def cmd_final_status_list(self, args):
        """``alive``, ``dead`` or ``seki`` stones, judged from playout ownership of the current position."""
        self._count(args, 1)
        wanted = args[0].lower()
        if wanted not in ("alive", "dead", "seki"):
            raise GtpError("syntax error")
        return self._vertices(self.stone_status() == wanted)

    def cmd_printsgf(self, args):
        from jaxgo.go.sgf import game_to_sgf

        text = game_to_sgf(self.game)
        if args:
            try:
                with open(args[0], "w", encoding="utf-8") as handle:
                    handle.write(text)
            except OSError:
                raise GtpError("cannot write file") from None
            return ""
        return text.strip()

    def cmd_jaxgo_ownership(self, args):
        """``jaxgo-ownership [playouts]``: playout ownership, ``size`` lines of ``size`` numbers in [-1, 1]
        (+1 = Black), top row first."""
        self._count(args, 0, 1)
        playouts = 256
        if args:
            try:
                playouts = int(args[0])
            except ValueError:
                raise GtpError("syntax error") from None
            if playouts < 1:
                raise GtpError("syntax error")
        owner = self.ownership(playouts)
        return "\n".join(" ".join(f"{v:.2f}" for v in row) for row in owner)

    def cmd_gogui_analyze_commands(self, args):
        try:
            from jaxgo.gtp.analysis import GOGUI_ANALYZE
        except ImportError:  # the server package is part of jaxgo; this only guards a partial install
            return "dboard/Ownership/jaxgo-ownership\nstring/Search statistics/jaxgo-search_stats"
        return GOGUI_ANALYZE

    def cmd_jaxgo_search_stats(self, args):
        result = self.last_search
        if result is None:
            return "no search yet"
        return (f"playouts {result.playouts} seconds {result.seconds:.2f} win rate {result.win_rate:.3f} "
                f"pv {' '.join(point_to_gtp(m, self.size) for m in result.pv)}")

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
        """Area score with komi, as GNU Go writes it: ``B+3.5``, ``W+0.5`` or ``0``.  Tromp-Taylor on the board
        as it stands; once both players have passed, stones that the playouts judge dead are removed first."""
        score = self.game.score()
        if self.game.is_over():
            score = self.settled_score()
        if score > 0:
            return f"B+{score:.1f}"
        if score < 0:
            return f"W+{-score:.1f}"
        return "0"

    def settled_score(self, dead_mask=None) -> float:
        """Tromp-Taylor score after removing the dead stones (``dead_mask`` bool [P], default from playouts)."""
        from jaxgo.go.game import Game

        if dead_mask is None:
            dead_mask = self.stone_status() == "dead"
        board = self.game.board().reshape(-1).copy()
        board[np.asarray(dead_mask, bool)] = 0
        settled = Game(self.rules)
        for color in (BLACK, WHITE):
            points = np.flatnonzero(board == color)
            if len(points):
                settled.setup_stones(color, points)
        return settled.score()

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
    parser.add_argument("--seed", type=int, default=None, help="seed of the search's random choices")
    parser.add_argument("--strategy", choices=STRATEGIES, default="rave",
                        help="move generator (default rave; random = uniform legal move)")
    parser.add_argument("--playouts", type=int, default=None,
                        help=f"playouts per move (default {DEFAULT_PLAYOUTS} unless --seconds or a GTP clock is set)")
    parser.add_argument("--seconds", type=float, default=None, help="seconds per move (overrides the GTP clock)")
    parser.add_argument("--leaves", type=int, default=None, help="leaves per device batch (K; default: from the budget, 4..128, about 48 batches per search)")
    parser.add_argument("--playouts-per-leaf", type=int, default=None, help="playouts per leaf (L, default 4)")
    parser.add_argument("--playout-policy", choices=["light", "heavy", "rules"], default="light",
                        help="leaf playouts: light (uniform), heavy (gamma-proportional, jaxgo.playouts.heavy) or "
                             "rules (MoGo-style capture / save / shape tiers, jaxgo.playouts.rule_policy)")
    parser.add_argument("--bias", type=float, default=0.0,
                        help="progressive-bias weight c2; K(s,a) = move-model probability (0 = off)")
    parser.add_argument("--prior", type=float, nargs=2, default=None, metavar=("EVEN", "PATTERN"),
                        help="RAVE virtual experience (Gelly & Silver): EVEN virtual playouts at 1/2 per move plus "
                             "PATTERN * sqrt(K(s,a)) virtual wins from the move model (e.g. 20 40; off by default)")
    parser.add_argument("--gammas", default=None, help="gamma file for heavy playouts / bias (default: shipped)")
    parser.add_argument("--resign-threshold", type=float, default=None,
                        help="resign when the best move's win rate is below this (default 0.08; 0 never resigns)")
    parser.add_argument("--quiet", action="store_true", help="no debug output on stderr")
    parser.add_argument("--server", default=None, metavar="ADDR",
                        help="thin front end: run searches in a `jaxgo serve` process (tcp:HOST:PORT or unix:PATH)")
    return parser


def rules_from_args(args) -> Rules | None:
    """The Rules of the --size/--komi/--rules/--suicide options, or None after printing why they are invalid."""
    try:
        return Rules(size=args.size, komi=args.komi, ko_rule=args.rules, suicide=args.suicide)
    except ValueError as exc:
        print(f"jaxgo gtp: {exc}", file=sys.stderr)
        return None


def search_options(args) -> dict:
    """``SearchConfig`` fields set by the command line (--leaves, --playouts-per-leaf, --playout-policy, --bias,
    --prior, --gammas, --resign-threshold); the rest keep their defaults."""
    options = {}
    if args.leaves:
        options["leaves_per_batch"] = args.leaves
    if args.playouts_per_leaf:
        options["playouts_per_leaf"] = args.playouts_per_leaf
    if args.playout_policy != "light":
        options["playouts"] = args.playout_policy
    if args.bias:
        options["bias_c2"] = args.bias
    if args.prior:
        options["prior_even"], options["prior_pattern"] = args.prior
    if args.gammas:
        options["gammas"] = args.gammas
    if args.resign_threshold is not None:
        options["resign_threshold"] = args.resign_threshold
    return options


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if any(a == "--server" or a.startswith("--server=") for a in argv):
        # Thin front end: searches run in a `jaxgo serve` process shared with other sessions.
        from jaxgo.gtp.remote import main as frontend_main

        return int(frontend_main(argv) or 0)
    args = build_parser().parse_args(argv)
    rules = rules_from_args(args)
    if rules is None:
        return 2
    options = search_options(args)
    engine = GtpEngine(rules, seed=args.seed, log=None if args.quiet else sys.stderr, strategy=args.strategy,
                       playouts=args.playouts, seconds=args.seconds, search_options=options)
    # Reads bytes (a stray non-UTF-8 byte cannot end the session) and streams analysis commands
    # (lz-analyze, kata-analyze) until the next command arrives.
    from jaxgo.gtp.loop import serve

    return int(serve(engine, getattr(sys.stdin, "buffer", sys.stdin), sys.stdout) or 0)


if __name__ == "__main__":
    sys.exit(main())
