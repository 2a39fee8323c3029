"""SGF game records: load with sgfmill, replay onto a host ``Game``, write a game back out.

``load_sgf`` reads the main line of a game record into a plain ``GameRecord`` (no JAX involved);
``replay`` builds a ``jaxgo.go.game.Game`` from it with GNU Go's ``loadsgf FILE N`` semantics: moves 1..N-1 are
played and the side to move is the colour of move N (without N the whole game is played).  ``game_to_sgf``
writes a ``Game`` (setup stones and moves) as an FF[4] record.  Every problem with a file is an ``SGFError``.

Points use the project convention (``jaxgo.go.coords``): ``row * size + col`` with row 0 at the top, pass = size*size.
SGF coordinates are two letters, column then row, both counted from the top-left corner; ``B[]`` is a pass,
and so is ``B[tt]`` on boards up to 19x19.

Bounded work for every reader (``loadsgf``, ``jaxgo serve``'s ``analyze``, the web board's ``POST /api/sgf``):
a record of more than ``MAX_SGF_NODES`` nodes is refused before sgfmill parses it (a cheap scan counts the
``;`` outside property values), a main line of more than ``MAX_SGF_MOVES`` moves is refused before any replay
(the analysis server's per-query cap), and ``KM`` must be finite with |komi| <= ``MAX_KOMI`` (GTP ``komi``'s
bound).  Each refusal is an ``SGFLimitError`` naming the limit.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from typing import Union

from jaxgo.go.config import Rules
from jaxgo.go.coords import BLACK, EMPTY, WHITE, colour_letter, gtp_moves

SGF_LETTERS = "abcdefghijklmnopqrstuvwxyz"
MAX_SGF_MOVES = 1500  # main-line moves; equal to jaxgo.server.protocol.MAX_QUERY_MOVES (tests check it)
MAX_SGF_NODES = 20_000  # nodes in the whole tree, variations included
MAX_KOMI = 1000.0  # |KM|, as GTP komi (jaxgo.gtp.core.MAX_KOMI)
_PROPERTY_VALUE = re.compile(rb"\[[^\]\\]*(?:\\.[^\]\\]*)*\]", re.DOTALL)


class SGFError(ValueError):
    """The SGF data cannot be read, is not a Go game, or cannot be replayed."""


class SGFLimitError(SGFError):
    """The SGF data is over one of the module's limits (the message names it)."""


def count_nodes(data: bytes) -> int:
    """The number of nodes in SGF ``data``: the ``;`` outside property values (an unterminated value counts
    what follows it).  Linear in ``len(data)``, no parse."""
    return _PROPERTY_VALUE.sub(b"", data).count(b";")


@dataclasses.dataclass
class GameRecord:
    """The main line of one SGF game, in project coordinates."""

    size: int = 19
    komi: float = 0.0
    handicap: int | None = None
    setup_black: list[int] = dataclasses.field(default_factory=list)
    setup_white: list[int] = dataclasses.field(default_factory=list)
    moves: list[tuple[int, int]] = dataclasses.field(default_factory=list)  # (color, move); pass = size*size
    player_to_move: int | None = None  # the root's PL property, if any
    result: str | None = None  # RE, e.g. 'B+3.5', 'W+R', '0'
    black_name: str | None = None
    white_name: str | None = None
    ruleset: str | None = None  # RU, informative only

    @property
    def pass_move(self) -> int:
        return self.size * self.size

    def gtp_moves(self) -> list[list[str]]:
        """The main line as ``[["B", "D4"], ["W", "pass"], ...]`` (GTP vertices)."""
        return gtp_moves(self.moves, self.size)

    def first_to_play(self) -> int:
        """Who moves first after the setup: PL, else the first move's colour, else White after handicap."""
        if self.player_to_move is not None:
            return self.player_to_move
        if self.moves:
            return self.moves[0][0]
        if (self.handicap or 0) >= 2 and self.setup_black and not self.setup_white:
            return WHITE
        return BLACK


def _colour(letter: str) -> int:
    return BLACK if letter.lower() == "b" else WHITE


def _point(rc, size: int) -> int:
    """sgfmill (row from the bottom, col) or None (pass) -> project point."""
    if rc is None:
        return size * size
    row, col = rc
    return (size - 1 - row) * size + col


def _read_bytes(source) -> bytes:
    if isinstance(source, (bytes, bytearray)):
        return bytes(source)
    if isinstance(source, str) and source.lstrip().startswith("("):
        return source.encode("utf-8")
    try:
        with open(os.fspath(source), "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise SGFError(f"cannot read SGF file {source!r}: {exc.strerror or exc}") from exc
    except TypeError as exc:
        raise SGFError(f"not a path or SGF data: {type(source).__name__}") from exc


def load_sgf(source: Union[str, bytes, os.PathLike], max_moves: int = MAX_SGF_MOVES,
             max_nodes: int = MAX_SGF_NODES) -> GameRecord:
    """Read the main line of an SGF game.

    ``source`` is a path, SGF bytes, or a str holding SGF text (one that starts with ``(``).
    Setup stones (AB/AW/AE) in the root or in nodes before the first move form the starting position;
    setup after the first move is not supported and raises ``SGFError``.  More than ``max_nodes`` nodes,
    more than ``max_moves`` main-line moves or a komi beyond ``MAX_KOMI`` raise ``SGFLimitError``.
    """
    from sgfmill import sgf

    data = _read_bytes(source)
    nodes = count_nodes(data)
    if nodes > max_nodes:
        raise SGFLimitError(f"the record has {nodes} nodes (at most {max_nodes} nodes are read)")
    try:
        sgf_game = sgf.Sgf_game.from_bytes(data)
    except ValueError as exc:
        raise SGFError(f"cannot parse SGF: {exc or 'syntax error'}") from exc
    root = sgf_game.get_root()
    try:
        if root.has_property("GM") and root.get("GM") != 1:
            raise SGFError(f"not a Go game record (GM[{root.get('GM')}])")
        size = sgf_game.get_size()
    except (ValueError, KeyError) as exc:
        raise SGFError(f"bad SZ property: {exc}") from exc
    record = GameRecord(size=size)
    try:
        record.komi = float(sgf_game.get_komi())
    except ValueError as exc:
        raise SGFError(f"bad KM property: {root.get_raw('KM')!r}") from exc
    if not (math.isfinite(record.komi) and abs(record.komi) <= MAX_KOMI):
        raise SGFLimitError(f"komi KM[{root.get_raw('KM').decode('latin-1')}] out of range (at most "
                            f"{MAX_KOMI:g} points)")
    try:
        record.handicap = sgf_game.get_handicap()
    except ValueError as exc:
        raise SGFError(f"bad HA property: {root.get_raw('HA')!r}") from exc
    for prop, attr in (("RE", "result"), ("PB", "black_name"), ("PW", "white_name"), ("RU", "ruleset")):
        if root.has_property(prop):
            try:
                setattr(record, attr, str(root.get(prop)).strip() or None)
            except ValueError:
                pass
    if root.has_property("PL"):
        try:
            record.player_to_move = _colour(root.get("PL"))
        except ValueError as exc:
            raise SGFError(f"bad PL property: {root.get_raw('PL')!r}") from exc

    black: set[int] = set()
    white: set[int] = set()
    for index, node in enumerate(sgf_game.get_main_sequence()):
        try:
            has_setup = node.has_setup_stones()
            if has_setup:
                add_black, add_white, empty = node.get_setup_stones()
            move = node.get_move()
        except ValueError as exc:
            raise SGFError(f"bad property in node {index}: {exc or 'invalid point'}") from exc
        if has_setup:
            if record.moves:
                raise SGFError(f"setup stones after a move (node {index}) are not supported")
            add_black = {_point(rc, size) for rc in add_black}
            add_white = {_point(rc, size) for rc in add_white}
            empty = {_point(rc, size) for rc in empty}
            black = (black - add_white - empty) | add_black
            white = (white - add_black - empty) | add_white
            if black & white:
                raise SGFError(f"setup stones of both colours on one point (node {index})")
            if index > 0 and node.has_property("PL"):
                record.player_to_move = _colour(node.get("PL"))
        colour, rc = move
        if colour is not None:
            if len(record.moves) >= max_moves:
                raise SGFLimitError(f"the main line has more than {max_moves} moves "
                                    f"(at most {max_moves} moves are read)")
            record.moves.append((_colour(colour), _point(rc, size)))
    record.setup_black = sorted(black)
    record.setup_white = sorted(white)
    return record


def replay(record: GameRecord, rules: Rules | None = None, move_number: int | None = None,
           check_superko: bool = False):
    """A ``Game`` holding ``record`` played up to (not including) move ``move_number`` (1-based).

    Board size and komi come from the record; ko rule and suicide from ``rules`` (defaults when None).
    With ``move_number`` N, moves 1..N-1 are played and the side to move is the colour of move N (N past the
    end plays the whole game).  Moves are checked against the basic rules (occupied, simple ko, suicide); the
    superko rule is only enforced during the replay when ``check_superko`` (records from other rule sets
    may legitimately repeat), but the history is kept so the game enforces it from here on.
    """
    from jaxgo.go.game import Game, IllegalMove

    base = rules if rules is not None else Rules()
    try:
        final_rules = dataclasses.replace(base, size=record.size, komi=record.komi)
    except ValueError as exc:
        raise SGFError(f"unsupported game: {exc}") from exc
    if move_number is not None and move_number < 1:
        raise SGFError(f"move number must be at least 1, got {move_number}")
    replay_rules = final_rules if check_superko else dataclasses.replace(final_rules, ko_rule="simple")

    game = Game(replay_rules)
    # The side to move is set before the setup stones so the position recorded for superko has it right.
    first = record.first_to_play()
    if first != game.to_play:
        game.set_to_play(first)
    try:
        if record.setup_black:
            game.setup_stones(BLACK, record.setup_black)
        if record.setup_white:
            game.setup_stones(WHITE, record.setup_white)
    except IllegalMove as exc:
        raise SGFError(f"bad setup stones: {exc.reason}") from exc

    last = len(record.moves) if move_number is None else min(move_number - 1, len(record.moves))
    for number, (colour, move) in enumerate(record.moves[:last], start=1):
        if not 0 <= move <= record.pass_move:
            raise SGFError(f"move {number} is off the board")
        try:
            game.play(colour, move)
        except IllegalMove as exc:
            raise SGFError(f"move {number} ({_describe(colour, move, record.size)}) is illegal: {exc.reason}") from exc
    if move_number is not None and move_number <= len(record.moves):
        colour = record.moves[move_number - 1][0]
        if colour != game.to_play:
            game.set_to_play(colour)
    game.rules = final_rules
    return game


def _describe(colour: int, move: int, size: int) -> str:
    from jaxgo.go.coords import point_to_gtp

    return f"{'B' if colour == BLACK else 'W'} {point_to_gtp(move, size)}"


# -- writing ----------------------------------------------------------------------------------------------
def point_to_sgf(point: int, size: int) -> str:
    """Project point -> SGF coordinate letters; pass -> '' (FF[4] pass)."""
    if point == size * size:
        return ""
    row, col = divmod(point, size)
    return SGF_LETTERS[col] + SGF_LETTERS[row]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def _history(game) -> list[tuple]:
    """The game's events in order: ('setup', color, points) and ('move', color, move).

    Uses ``game.history`` when the Game provides it, else reconstructs setup events from ``game.steps()``.
    """
    if hasattr(game, "history"):
        return list(game.history)
    import numpy as np

    if not hasattr(game, "steps"):
        return [("move", c, m) for c, m in game.moves]
    steps = game.steps()
    events = []
    moves = iter(game.moves)
    states = [state for state, _ in steps] + [game.state]
    for i, (_, was_move) in enumerate(steps):
        if was_move:
            colour, move = next(moves)
            events.append(("move", colour, move))
            continue
        before = np.asarray(states[i].stones)
        after = np.asarray(states[i + 1].stones)
        for colour in (BLACK, WHITE):
            points = np.flatnonzero((before == EMPTY) & (after == colour)).tolist()
            if points:
                events.append(("setup", colour, points))
    return events


def game_to_sgf(game, result: str | None = None, black_name: str | None = None,
                white_name: str | None = None) -> str:
    """The game as FF[4] SGF text: root with SZ/KM, setup stones as AB/AW, then one node per move."""
    from jaxgo import __version__

    size = game.size
    komi = game.rules.komi
    komi_text = f"{komi:g}"
    root = [f"FF[4]GM[1]CA[UTF-8]AP[jaxgo:{__version__}]SZ[{size}]KM[{komi_text}]"]
    if black_name:
        root.append(f"PB[{_escape(black_name)}]")
    if white_name:
        root.append(f"PW[{_escape(white_name)}]")
    if result:
        root.append(f"RE[{_escape(result)}]")
    nodes: list[list[str]] = []
    current: list[str] = root  # where the next setup property goes
    for event in _history(game):
        kind, colour = event[0], event[1]
        letter = colour_letter(colour)
        if kind == "setup":
            if current is not root and not current[0].startswith("A"):
                current = []  # setup after a move: a node of its own
                nodes.append(current)
            values = "".join(f"[{point_to_sgf(p, size)}]" for p in sorted(event[2]))
            current.append(f"A{letter}{values}")
        else:
            current = [f"{letter}[{point_to_sgf(event[2], size)}]"]
            nodes.append(current)
    if not game.moves and game.to_play == WHITE:
        root.append("PL[W]")
    text = "(;" + "".join(root)
    for node in nodes:
        text += "\n;" + "".join(node)
    return text + ")\n"


__all__ = ["GameRecord", "SGFError", "SGFLimitError", "MAX_SGF_MOVES", "MAX_SGF_NODES", "MAX_KOMI", "count_nodes",
           "load_sgf", "replay", "game_to_sgf", "point_to_sgf"]
