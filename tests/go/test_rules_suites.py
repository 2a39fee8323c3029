"""Rules checked against other programs' test suites (shared data, skipped when absent).

* Fuego's ``regression/repetition.tst``: ``loadsgf`` + ``go_param_rules ko_rule ...`` + ``is_legal`` with the
  expected answers in ``#? [...]`` lines, run through our GTP engine.
* Pachi's ``t-unit`` ASCII positions: every position must load (board round trip, no chain without a
  liberty), the legal moves of both colours must match an independent flood-fill oracle written here, and
  every move a Pachi test names (``bad_selfatari b c3 1``, ``atari w C5 ...``, ...) must be judged and played
  as the oracle says (legality and reason, captured stones, resulting board, the ko it creates).  Pachi's
  ``ko V`` lines and a few hand-picked positions (suicide, ko, snapback, throw-in) get explicit expectations.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.go.config import Rules  # noqa: E402
from jaxgo.go.coords import BLACK, EMPTY, WHITE, gtp_to_point, parse_color  # noqa: E402
from jaxgo.util.paths import data_dir  # noqa: E402

SHARED = data_dir() / "rules"
FUEGO_DIR = SHARED / "fuego-regression" / "regression"
FUEGO_REPETITION = FUEGO_DIR / "repetition.tst"
PACHI_DIR = SHARED / "pachi-tunit" / "t-unit"


# ==========================================================================================================
# Fuego regression: repetition.tst
# ==========================================================================================================
@dataclass
class RegressionTest:
    ident: str
    command: str
    pattern: str
    expect_fail: bool  # a trailing '*' marks a known failure in GNU Go / Fuego regression files
    line: int


def parse_regression(path: Path) -> tuple[list[tuple[int, str]], list[RegressionTest]]:
    """(all command lines with line numbers, the tests: numbered commands followed by ``#? [pattern]``)."""
    commands: list[tuple[int, str]] = []
    tests: list[RegressionTest] = []
    last_numbered: tuple[int, str] | None = None
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.strip()
        match = re.match(r"#\?\s*\[(.*)\](\*?)", line)
        if match:
            assert last_numbered is not None, f"{path.name}:{number}: expectation without a command"
            ident, command = last_numbered[1].split(None, 1)
            tests.append(RegressionTest(ident, command, match.group(1), bool(match.group(2)), last_numbered[0]))
            last_numbered = None
            continue
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        commands.append((number, text))
        if text.split()[0].isdigit():
            last_numbered = (number, text)
    return commands, tests


def _fuego_tests() -> list[RegressionTest]:
    if not FUEGO_REPETITION.exists():
        return []
    return parse_regression(FUEGO_REPETITION)[1]


@pytest.fixture(scope="module")
def fuego_responses() -> dict[str, str]:
    """Run the whole repetition.tst through one engine (state carries over, as in the real runner)."""
    if not FUEGO_REPETITION.exists():
        pytest.skip(f"Fuego regression data not found at {FUEGO_REPETITION}")
    from jaxgo.gtp.engine import make_gtp_engine
    from jaxgo.search.config import SearchConfig

    rules = Rules(size=19, komi=6.5, ko_rule="situational")
    engine = make_gtp_engine(rules, SearchConfig(playout_policy="light", bias_c2=0.0))
    commands, _ = parse_regression(FUEGO_REPETITION)
    answers: dict[str, str] = {}
    for number, text in commands:
        words = text.split()
        name_at = 1 if words[0].isdigit() else 0
        if words[name_at] == "loadsgf":  # paths are relative to the regression directory
            words[name_at + 1] = str(FUEGO_DIR / words[name_at + 1])
        response = engine.handle(" ".join(words))
        assert response is not None
        if name_at:
            answers[words[0]] = response
        else:
            assert response.startswith("="), f"repetition.tst:{number}: {text!r} failed: {response!r}"
    return answers


FUEGO_TESTS = _fuego_tests()


@pytest.mark.parametrize("test", FUEGO_TESTS or [None], ids=[f"{t.ident}-{t.command.replace(' ', '_')}"
                                                             for t in FUEGO_TESTS] or ["missing"])
def test_fuego_repetition(test, fuego_responses):
    if test is None:
        pytest.skip(f"Fuego regression data not found at {FUEGO_REPETITION}")
    response = fuego_responses[test.ident]
    match = re.match(rf"^([=?]){test.ident} (.*)\n\n$", response, re.S)
    assert match, response
    answer = match.group(2).strip()
    ok = match.group(1) == "=" and re.fullmatch(test.pattern, answer) is not None
    if test.expect_fail and not ok:
        pytest.xfail("marked as an expected failure in the suite")
    assert ok, f"repetition.tst:{test.line} {test.command}: got {answer!r}, expected [{test.pattern}]"


def test_fuego_repetition_has_all_cases():
    if not FUEGO_REPETITION.exists():
        pytest.skip(f"Fuego regression data not found at {FUEGO_REPETITION}")
    assert len(FUEGO_TESTS) == 15
    assert {t.command.split()[0] for t in FUEGO_TESTS} == {"is_legal"}


# ==========================================================================================================
# An independent oracle: plain flood fill on a numpy board
# ==========================================================================================================
def neighbours(point: int, size: int) -> list[int]:
    row, col = divmod(point, size)
    out = []
    if row > 0:
        out.append(point - size)
    if row < size - 1:
        out.append(point + size)
    if col > 0:
        out.append(point - 1)
    if col < size - 1:
        out.append(point + 1)
    return out


def chain_and_liberties(board: np.ndarray, point: int, size: int) -> tuple[set[int], set[int]]:
    colour = board[point]
    stones, liberties, todo = {point}, set(), [point]
    while todo:
        p = todo.pop()
        for q in neighbours(p, size):
            if board[q] == colour and q not in stones:
                stones.add(q)
                todo.append(q)
            elif board[q] == EMPTY:
                liberties.add(q)
    return stones, liberties


@dataclass
class OracleMove:
    reason: str | None  # None when legal, else 'occupied' / 'suicide' / 'ko'
    board: np.ndarray | None = None
    captured: int = 0
    ko: int | None = None  # the point the opponent may not retake at once


def oracle_play(board: np.ndarray, colour: int, point: int, size: int, ko: int | None = None,
                suicide: bool = False) -> OracleMove:
    """Flat int8 board; simple ko given as the forbidden point (for ``colour``)."""
    if board[point] != EMPTY:
        return OracleMove("occupied")
    if ko is not None and point == ko:
        return OracleMove("ko")
    after = board.copy()
    after[point] = colour
    captured = []
    for q in neighbours(point, size):
        if after[q] == -colour:
            stones, libs = chain_and_liberties(after, q, size)
            if not libs:
                captured.extend(stones)
                after[list(stones)] = EMPTY
    stones, libs = chain_and_liberties(after, point, size)
    if not libs:
        if not suicide:
            return OracleMove("suicide")
        after[list(stones)] = EMPTY
        return OracleMove(None, after, 0, None)
    new_ko = captured[0] if len(captured) == 1 and len(stones) == 1 and len(libs) == 1 else None
    return OracleMove(None, after, len(set(captured)), new_ko)


def oracle_legal(board: np.ndarray, colour: int, size: int, ko: int | None = None) -> np.ndarray:
    return np.array([oracle_play(board, colour, p, size, ko).reason is None for p in range(size * size)])


# ==========================================================================================================
# Pachi t-unit positions
# ==========================================================================================================
@dataclass
class PachiCase:
    file: str
    line: int  # the boardsize line
    description: str
    size: int
    board: np.ndarray  # flat int8, row 0 at the top
    last_move: int | None
    commands: list[tuple[int, str]] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)

    @property
    def ident(self) -> str:
        return f"{self.file}:{self.line}"


BOARD_ROW = re.compile(r"^[.XO)( ]+$")
OPTION = re.compile(r"^(komi|rules|passes|handicap)\b\s*(.*)$")


def parse_board_row(text: str, size: int) -> tuple[list[int], int | None]:
    """Cells of one ASCII row (``X``, ``O``, ``.``) and the column of the last-move marker ``X)`` if any."""
    cells: list[int] = []
    last = None
    for ch in text:
        if ch in ".XO":
            cells.append({".": EMPTY, "X": BLACK, "O": WHITE}[ch])
        elif ch == ")":
            last = len(cells) - 1
        elif ch not in " (":
            raise ValueError(f"unexpected {ch!r} in board row {text!r}")
    if len(cells) != size:
        raise ValueError(f"board row {text!r} has {len(cells)} cells, expected {size}")
    return cells, last


def parse_tunit(path: Path) -> list[PachiCase]:
    lines = path.read_text().splitlines()
    cases: list[PachiCase] = []
    description = ""
    current: PachiCase | None = None
    i = 0
    while i < len(lines):
        raw = lines[i]
        text = raw.split("#", 1)[0].rstrip()
        if raw.startswith("%"):
            description = raw[1:].strip()
            current = None
        elif text.startswith("boardsize"):
            size = int(text.split()[1])
            start = i + 1
            options: dict[str, str] = {}
            i += 1
            while i < len(lines) and OPTION.match(lines[i].split("#", 1)[0].strip()):
                key, value = OPTION.match(lines[i].split("#", 1)[0].strip()).groups()
                options[key] = value
                i += 1
            rows: list[int] = []
            last_move = None
            for r in range(size):
                cells, last = parse_board_row(lines[i].split("#", 1)[0].rstrip(), size)
                if last is not None:
                    last_move = r * size + last
                rows.extend(cells)
                i += 1
            current = PachiCase(path.name, start, description, size, np.array(rows, np.int8), last_move,
                                options=options)
            cases.append(current)
            continue
        elif text.strip() and current is not None:
            stripped = text.strip()
            if OPTION.match(stripped):
                key, value = OPTION.match(stripped).groups()
                current.options[key] = value
            else:
                current.commands.append((i + 1, stripped))
        i += 1
    return cases


def _pachi_cases() -> list[PachiCase]:
    if not PACHI_DIR.exists():
        return []
    cases: list[PachiCase] = []
    for path in sorted(PACHI_DIR.glob("*.t")):
        cases.extend(parse_tunit(path))
    return cases


PACHI_CASES = _pachi_cases()
SKIP_PACHI = f"Pachi t-unit data not found at {PACHI_DIR}"


def _colour_vertex(case: PachiCase, command: str) -> tuple[int, int] | None:
    """(colour, point) when the command's first two arguments are a colour and a vertex (e.g. ``sar b n19 1``)."""
    words = command.lstrip("!").split()
    if len(words) < 3 or words[0] == "ko":
        return None
    try:
        return parse_color(words[1]), gtp_to_point(words[2], case.size)
    except ValueError:
        return None


PACHI_MOVES = [(case, number, command, *cv) for case in PACHI_CASES for number, command in case.commands
               if (cv := _colour_vertex(case, command)) is not None and cv[1] != case.size ** 2]
PACHI_KO = [(case, number, command) for case in PACHI_CASES for number, command in case.commands
            if command.split()[0] == "ko"]


def new_game(size: int, ko_rule: str = "simple"):
    from jaxgo.go.game import Game

    return Game(Rules(size=size, komi=0.0, ko_rule=ko_rule))


def game_from_board(board: np.ndarray, size: int, to_play: int = BLACK, ko_rule: str = "simple"):
    game = new_game(size, ko_rule)
    if to_play != game.to_play:
        game.set_to_play(to_play)
    for colour in (BLACK, WHITE):
        points = np.flatnonzero(board == colour).tolist()
        if points:
            game.setup_stones(colour, points)
    return game


def _vertex_list(points, size) -> list[str]:
    from jaxgo.go.coords import point_to_gtp

    return [point_to_gtp(int(p), size) for p in points]


def assert_legal_moves_match(game, board: np.ndarray, colour: int, size: int, ko: int | None = None):
    got = np.asarray(game.legal_moves(colour))
    want = oracle_legal(board, colour, size, ko)
    assert got.shape == (size * size + 1,) and got[-1], "pass must always be legal"
    diff = np.flatnonzero(got[:-1] != want)
    who = "black" if colour == BLACK else "white"
    assert not len(diff), (f"{who} legal moves differ at {_vertex_list(diff, size)}: "
                           f"engine {got[diff].tolist()}, oracle {want[diff].tolist()}")


# -- every position loads and has the right legal moves -----------------------------------------------
@pytest.mark.skipif(not PACHI_CASES, reason=SKIP_PACHI)
def test_pachi_suite_parsed():
    files = {case.file for case in PACHI_CASES}
    assert len(PACHI_CASES) == 415 and len(files) == 23
    assert len(PACHI_MOVES) > 400 and len(PACHI_KO) == 2


@pytest.mark.skipif(not PACHI_CASES, reason=SKIP_PACHI)
@pytest.mark.parametrize("case", PACHI_CASES, ids=[c.ident for c in PACHI_CASES])
def test_pachi_position(case: PachiCase):
    size, board = case.size, case.board
    # A position of a real game: no chain without a liberty.
    for point in np.flatnonzero(board != EMPTY):
        _, libs = chain_and_liberties(board, int(point), size)
        assert libs, f"chain at {_vertex_list([point], size)} has no liberty"
    to_play = -board[case.last_move] if case.last_move is not None else BLACK
    game = game_from_board(board, size, int(to_play))
    assert np.array_equal(game.board().reshape(-1), board)
    assert game.to_play == to_play
    assert game.captures(BLACK) == 0 and game.captures(WHITE) == 0
    for colour in (BLACK, WHITE):
        assert_legal_moves_match(game, board, colour, size)


# -- every move a Pachi test names -------------------------------------------------------------------
@pytest.mark.skipif(not PACHI_MOVES, reason=SKIP_PACHI)
@pytest.mark.parametrize("case, number, command, colour, point", PACHI_MOVES or [(None,) * 5],
                         ids=[f"{c.file}:{n}:{cmd.split('#')[0].strip().replace(' ', '_')}"
                              for c, n, cmd, _, _ in PACHI_MOVES] or ["missing"])
def test_pachi_move(case: PachiCase, number: int, command: str, colour: int, point: int):
    from jaxgo.go.game import IllegalMove

    size = case.size
    game = game_from_board(case.board, size, colour)
    want = oracle_play(case.board, colour, point, size)
    assert game.is_legal(colour, point) == (want.reason is None)
    if want.reason is not None:
        assert game.illegal_reason(colour, point) == want.reason
        with pytest.raises(IllegalMove):
            game.play(colour, point)
        assert np.array_equal(game.board().reshape(-1), case.board)  # unchanged
        return
    game.play(colour, point)
    assert np.array_equal(game.board().reshape(-1), want.board)
    assert game.captures(colour) == want.captured and game.captures(-colour) == 0
    assert game.to_play == -colour
    if want.ko is not None:
        assert game.illegal_reason(-colour, want.ko) == "ko"
    # The opponent's legal moves, ko included, match the oracle (so no ko is invented either).
    assert_legal_moves_match(game, want.board, -colour, size, want.ko)
    game.undo()
    assert np.array_equal(game.board().reshape(-1), case.board) and game.captures(colour) == 0


# -- Pachi's `ko V` lines: V just captured a single stone, so the recapture is forbidden ---------------
@pytest.mark.skipif(not PACHI_KO, reason=SKIP_PACHI)
@pytest.mark.parametrize("case, number, command", PACHI_KO or [(None,) * 3],
                         ids=[f"{c.file}:{n}" for c, n, _ in PACHI_KO] or ["missing"])
def test_pachi_ko(case: PachiCase, number: int, command: str):
    size, board = case.size, case.board
    ko_stone = gtp_to_point(command.split()[1], size)
    taker = int(board[ko_stone])
    assert taker != EMPTY
    stones, libs = chain_and_liberties(board, ko_stone, size)
    assert len(stones) == 1 and len(libs) == 1, "a ko stone is a single stone in atari"
    (ko_point,) = libs
    # Rebuild the position before the capture: the taker's stone off, the captured stone back.
    before = board.copy()
    before[ko_stone] = EMPTY
    before[ko_point] = -taker
    game = game_from_board(before, size, taker)
    game.play(taker, ko_stone)
    assert np.array_equal(game.board().reshape(-1), board)
    assert game.captures(taker) == 1
    assert game.illegal_reason(-taker, ko_point) == "ko"
    assert_legal_moves_match(game, board, -taker, size, ko_point)
    # After an exchange elsewhere the ko may be retaken.
    empties = [p for p in np.flatnonzero(board == EMPTY) if p != ko_point]
    game.play(-taker, size * size)
    game.play(taker, int(empties[0]))
    assert game.is_legal(-taker, ko_point)


# -- hand-picked rules positions with explicit expectations --------------------------------------------
def find_case(file: str, description: str, size: int) -> PachiCase:
    if not PACHI_CASES:
        pytest.skip(SKIP_PACHI)
    matches = [c for c in PACHI_CASES if c.file == file and c.description == description and c.size == size]
    assert matches, f"no {size}x{size} case {description!r} in {file}"
    return matches[0]


def play_all(game, moves: list[tuple[int, str]]):
    for colour, vertex in moves:
        game.play(colour, gtp_to_point(vertex, game.size))


def test_pachi_suicide_and_eye_fill():
    # O O O / O . O / . O O: Black B2 is suicide; White may fill its own eye.
    case = find_case("selfatari.t", "Selfatari / suicide", 3)
    game = game_from_board(case.board, 3)
    assert game.illegal_reason(BLACK, gtp_to_point("B2", 3)) == "suicide"
    assert game.illegal_reason(BLACK, gtp_to_point("A1", 3)) == "suicide"
    assert game.is_legal(WHITE, gtp_to_point("B2", 3))


def test_pachi_corner_ko_capture():
    # X . . / . X . / X O . : White A2 takes A1; Black may not retake at once, later it may.
    case = find_case("selfatari.t", "Ko capture", 3)
    game = game_from_board(case.board, 3, WHITE)
    play_all(game, [(WHITE, "A2")])
    assert game.captures(WHITE) == 1
    assert game.illegal_reason(BLACK, gtp_to_point("A1", 3)) == "ko"
    play_all(game, [(BLACK, "C3"), (WHITE, "pass")])
    assert game.is_legal(BLACK, gtp_to_point("A1", 3))
    play_all(game, [(BLACK, "A1")])
    assert game.captures(BLACK) == 1 and game.board()[1, 0] == EMPTY


def test_pachi_capture_two_stones():
    # . O . / O X . / O X . : Black A3 captures A2+A1; White A3 instead is a legal self-atari.
    case = find_case("selfatari.t", "Capture group", 3)
    game = game_from_board(case.board, 3)
    play_all(game, [(BLACK, "A3")])
    assert game.captures(BLACK) == 2
    assert game.board()[1, 0] == EMPTY and game.board()[2, 0] == EMPTY
    game.undo()
    play_all(game, [(WHITE, "A3")])
    stones, libs = chain_and_liberties(game.board().reshape(-1), gtp_to_point("A3", 3), 3)
    assert len(stones) == 4 and _vertex_list(sorted(libs), 3) == ["C3"]


def test_pachi_snapback_is_not_ko():
    # Throw-in at C4, White takes it at B4, Black recaptures three stones at C4 at once: legal, no ko.
    case = find_case("selfatari.t", "Snapback", 5)
    game = game_from_board(case.board, 5)
    play_all(game, [(BLACK, "C4"), (WHITE, "B4")])
    assert game.captures(WHITE) == 1
    assert game.is_legal(BLACK, gtp_to_point("C4", 5))
    play_all(game, [(BLACK, "C4")])
    assert game.captures(BLACK) == 3
    assert int(game.state.ko) == -1
    board = game.board().reshape(-1)
    assert all(board[gtp_to_point(v, 5)] == EMPTY for v in ["B4", "B3", "C3"])
    assert board[gtp_to_point("C5", 5)] == WHITE


def test_pachi_ko_throw_in():
    # B C3 throw-in, W B3 takes it: a ko, so Black may not retake at C3 immediately.
    case = find_case("selfatari.t", "Ko throwin, not snapback", 5)
    game = game_from_board(case.board, 5)
    play_all(game, [(BLACK, "C3"), (WHITE, "B3")])
    assert game.captures(WHITE) == 1
    assert game.illegal_reason(BLACK, gtp_to_point("C3", 5)) == "ko"


def test_pachi_ko_capture_5x5():
    # B C3 captures B3 into a ko: White may not retake at B3 at once.
    case = find_case("selfatari.t", "Ko capture", 5)
    game = game_from_board(case.board, 5)
    play_all(game, [(BLACK, "C3")])
    assert game.captures(BLACK) == 1
    assert game.illegal_reason(WHITE, gtp_to_point("B3", 5)) == "ko"
