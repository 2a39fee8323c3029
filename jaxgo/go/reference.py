"""A slow, obviously correct Go board in plain numpy/Python: the oracle the fast engine is tested against.

Everything is recomputed from scratch by flood fill; there is no incremental state besides the stones, the
side to move, the ko point, the pass count and the capture counts.  Conventions are those of
``jaxgo.go.coords``: point ``row * N + col`` with row 0 the top row as printed, pass = ``N * N``, BLACK = 1,
WHITE = -1, EMPTY = 0.

Rules: Tromp-Taylor area scoring with komi; simple ko (a single stone that captured exactly one stone and is
left with that one liberty may not be recaptured at once); suicide forbidden unless ``suicide=True``, in which
case the suicidal chain is removed and counted as captured by the opponent.

``is_legal`` decides a move by trying it on a copy of the board (place, remove opponent chains without
liberties, look at the mover's chain).  ``legal_mask`` is the faster textbook characterisation computed from
one labelling of the board; the tests check the two agree.
"""

from __future__ import annotations

import functools

import numpy as np

from jaxgo.go.coords import BLACK, EMPTY, WHITE
from jaxgo.go.tables import diagonal_lists, neighbour_lists

_BLACK_CHARS = "Xx#@"
_WHITE_CHARS = "Oo"
_EMPTY_CHARS = ".+,"


def flood_fill(stones: np.ndarray, start: int, size: int) -> list[int]:
    """Points of the connected set of ``stones[start]``'s colour (stone chain or empty region) from ``start``."""
    nbrs = neighbour_lists(size)
    colour = stones[start]
    seen = {start}
    stack = [start]
    while stack:
        point = stack.pop()
        for nb in nbrs[point]:
            if nb not in seen and stones[nb] == colour:
                seen.add(nb)
                stack.append(nb)
    return sorted(seen)


def label_chains(stones: np.ndarray, size: int) -> tuple[np.ndarray, list[int]]:
    """Label every chain of stones by flood fill.

    Returns ``label`` int [P] (-1 on empty points) and the number of distinct liberties of each label.
    """
    label = np.full(size * size, -1, dtype=np.int64)
    libs: list[int] = []
    for start in np.flatnonzero(stones != EMPTY):
        if label[start] >= 0:
            continue
        members = flood_fill(stones, int(start), size)
        label[members] = len(libs)
        libs.append(int(_liberties(stones, members, size).sum()))
    return label, libs


class ReferenceBoard:
    """One Go position with plain flood-fill rules (see the module docstring)."""

    def __init__(self, size: int, komi: float = 7.5, suicide: bool = False):
        if not 1 <= size <= 25:
            raise ValueError(f"board size must be 1..25, got {size}")
        self.size = int(size)
        self.komi = float(komi)
        self.suicide = bool(suicide)
        self.stones = np.zeros(self.size * self.size, dtype=np.int8)
        self.to_play = BLACK
        self.ko_point = -1
        self.passes = 0
        self.captures = {BLACK: 0, WHITE: 0}

    # ------------------------------------------------------------------------------------------------------
    # Construction and display

    @property
    def num_points(self) -> int:
        return self.size * self.size

    @property
    def pass_move(self) -> int:
        return self.size * self.size

    @classmethod
    def from_ascii(cls, text: str, to_play: int = BLACK, komi: float = 7.5, suicide: bool = False):
        """Board from rows of text, top row first.

        ``X x # @`` are black, ``O o`` white, ``. + ,`` empty; spaces are ignored, blank lines skipped.
        The size is the number of rows, and every row must have that many points.  No capture is applied.
        """
        rows = []
        for line in text.strip("\n").splitlines():
            line = line.replace(" ", "").replace("\t", "")
            if not line:
                continue
            row = []
            for char in line:
                if char in _BLACK_CHARS:
                    row.append(BLACK)
                elif char in _WHITE_CHARS:
                    row.append(WHITE)
                elif char in _EMPTY_CHARS:
                    row.append(EMPTY)
                else:
                    raise ValueError(f"unexpected character {char!r} in board text")
            rows.append(row)
        size = len(rows)
        if size == 0 or any(len(row) != size for row in rows):
            raise ValueError(f"board text is not square: row lengths {[len(r) for r in rows]}")
        if to_play not in (BLACK, WHITE):
            raise ValueError(f"to_play must be BLACK or WHITE, got {to_play}")
        board = cls(size, komi=komi, suicide=suicide)
        board.stones = np.array(rows, dtype=np.int8).reshape(-1)
        board.to_play = to_play
        return board

    @classmethod
    def from_stones(cls, stones, to_play: int = BLACK, komi: float = 7.5, suicide: bool = False):
        """Board from a flat int8 [P] (or [N, N]) array of stones."""
        array = np.asarray(stones, dtype=np.int8).reshape(-1)
        size = int(round(np.sqrt(array.shape[0])))
        if size * size != array.shape[0]:
            raise ValueError(f"{array.shape[0]} points is not a square board")
        board = cls(size, komi=komi, suicide=suicide)
        board.stones = array.copy()
        board.to_play = to_play
        return board

    def copy(self) -> "ReferenceBoard":
        other = ReferenceBoard(self.size, komi=self.komi, suicide=self.suicide)
        other.stones = self.stones.copy()
        other.to_play = self.to_play
        other.ko_point = self.ko_point
        other.passes = self.passes
        other.captures = dict(self.captures)
        return other

    def to_ascii(self) -> str:
        """Rows top first, ``X`` black, ``O`` white, ``.`` empty, points separated by spaces; the ko point
        (if any) is shown as ``*``."""
        chars = {BLACK: "X", WHITE: "O", EMPTY: "."}
        lines = []
        for row in range(self.size):
            cells = []
            for col in range(self.size):
                point = row * self.size + col
                cells.append("*" if point == self.ko_point else chars[int(self.stones[point])])
            lines.append(" ".join(cells))
        return "\n".join(lines)

    def __repr__(self) -> str:
        mover = "black" if self.to_play == BLACK else "white"
        return (
            f"ReferenceBoard(size={self.size}, to_play={mover}, ko={self.ko_point}, passes={self.passes}, "
            f"captures={self.captures})\n{self.to_ascii()}"
        )

    # ------------------------------------------------------------------------------------------------------
    # Chains

    def _check_point(self, point: int) -> int:
        point = int(point)
        if not 0 <= point < self.num_points:
            raise ValueError(f"point {point} is off the {self.size}x{self.size} board")
        return point

    def chain(self, point: int) -> np.ndarray:
        """bool [P]: the connected set of points with the same colour as ``point`` (a chain of stones, or an
        empty region when ``point`` is empty)."""
        point = self._check_point(point)
        mask = np.zeros(self.num_points, dtype=bool)
        mask[flood_fill(self.stones, point, self.size)] = True
        return mask

    def liberties(self, point: int) -> np.ndarray:
        """bool [P]: the distinct empty points adjacent to the chain of the stone at ``point``."""
        point = self._check_point(point)
        if self.stones[point] == EMPTY:
            raise ValueError(f"point {point} is empty")
        return _liberties(self.stones, flood_fill(self.stones, point, self.size), self.size)

    # ------------------------------------------------------------------------------------------------------
    # Moves

    def _try(self, move: int):
        """Place a stone of the side to move at empty ``move`` on a copy of the board.

        Returns (stones after captures and suicide removal, captured opponent points, mover's chain points,
        whether the mover's chain had no liberty and was removed).
        """
        color = self.to_play
        stones = self.stones.copy()
        stones[move] = color
        captured: list[int] = []
        for nb in neighbour_lists(self.size)[move]:
            if stones[nb] == -color:
                enemy = flood_fill(stones, nb, self.size)
                if not _liberties(stones, enemy, self.size).any():
                    stones[enemy] = EMPTY
                    captured.extend(enemy)
        own = flood_fill(stones, move, self.size)
        suicided = not _liberties(stones, own, self.size).any()
        if suicided:
            stones[own] = EMPTY
        return stones, sorted(set(captured)), own, suicided

    def illegal_reason(self, move: int) -> str | None:
        """Why ``move`` is illegal for the side to move, or None if it is legal."""
        move = int(move)
        if move == self.pass_move:
            return None
        if not 0 <= move < self.num_points:
            return f"move {move} is off the board"
        if self.stones[move] != EMPTY:
            return f"point {move} is occupied"
        if move == self.ko_point:
            return f"point {move} is a simple ko recapture"
        if not self.suicide:
            _, _, _, suicided = self._try(move)
            if suicided:
                return f"point {move} is suicide"
        return None

    def is_legal(self, move: int) -> bool:
        """Whether ``move`` (point or pass) is legal for ``self.to_play``; decided by trying it on a copy."""
        return self.illegal_reason(move) is None

    def legal_mask_slow(self) -> np.ndarray:
        """bool [P+1]: ``is_legal`` for every point, then pass (True)."""
        return np.array([self.is_legal(m) for m in range(self.num_points + 1)], dtype=bool)

    def legal_mask(self) -> np.ndarray:
        """bool [P+1]: legal moves for the side to move (last entry: pass, always True).

        An empty non-ko point is legal when it has an empty neighbour, or touches an own chain with at least two
        liberties, or touches an opponent chain with exactly one liberty (which it then captures); with
        suicide allowed every empty non-ko point is legal.  Same answers as ``legal_mask_slow`` (tested).
        """
        points = self.num_points
        mask = np.zeros(points + 1, dtype=bool)
        mask[points] = True
        color = self.to_play
        label, libs = label_chains(self.stones, self.size)
        nbrs = neighbour_lists(self.size)
        for point in range(points):
            if self.stones[point] != EMPTY or point == self.ko_point:
                continue
            if self.suicide:
                mask[point] = True
                continue
            for nb in nbrs[point]:
                stone = self.stones[nb]
                if (
                    stone == EMPTY
                    or (stone == color and libs[label[nb]] >= 2)
                    or (stone == -color and libs[label[nb]] == 1)
                ):
                    mask[point] = True
                    break
        return mask

    def play(self, move: int) -> None:
        """Play ``move`` (point or pass) for the side to move; raise ValueError if it is illegal."""
        move = int(move)
        reason = self.illegal_reason(move)
        if reason is not None:
            raise ValueError(f"illegal move for {'black' if self.to_play == BLACK else 'white'}: {reason}")
        color = self.to_play
        if move == self.pass_move:
            self.passes += 1
            self.ko_point = -1
            self.to_play = -color
            return
        stones, captured, own, suicided = self._try(move)
        self.stones = stones
        self.captures[color] += len(captured)
        if suicided:
            self.captures[-color] += len(own)
        self.ko_point = -1
        if len(captured) == 1 and own == [move]:
            libs = np.flatnonzero(_liberties(stones, own, self.size))
            if list(libs) == captured:
                self.ko_point = captured[0]
        self.passes = 0
        self.to_play = -color

    def is_over(self) -> bool:
        """The game ends after two consecutive passes."""
        return self.passes >= 2

    # ------------------------------------------------------------------------------------------------------
    # Eyes and scoring

    def is_eye(self, point: int, color: int) -> bool:
        """The playout eye rule: ``point`` is empty, every on-board orthogonal neighbour is ``color``, and the
        opponent holds no diagonal point if ``point`` is on the edge or in a corner, at most one otherwise."""
        point = self._check_point(point)
        if self.stones[point] != EMPTY:
            return False
        if any(self.stones[nb] != color for nb in neighbour_lists(self.size)[point]):
            return False
        diags = diagonal_lists(self.size)[point]
        enemy = sum(1 for d in diags if self.stones[d] == -color)
        on_edge = len(diags) < 4
        return enemy <= (0 if on_edge else 1)

    def eye_mask(self, color: int) -> np.ndarray:
        """bool [P]: ``is_eye(point, color)`` for every point (numpy version of the same rule; tested equal)."""
        orth, diag = _padded_tables(self.size)
        padded = np.concatenate([self.stones, np.array([_OFF], dtype=np.int8)])
        orth_colour, diag_colour = padded[orth], padded[diag]
        surrounded = np.all((orth_colour == color) | (orth_colour == _OFF), axis=1)
        enemy = np.sum(diag_colour == -color, axis=1)
        on_edge = np.any(diag_colour == _OFF, axis=1)
        return (self.stones == EMPTY) & surrounded & (enemy <= np.where(on_edge, 0, 1))

    def ownership(self) -> np.ndarray:
        """int8 [P]: Tromp-Taylor owner: a stone's colour; for an empty point the colour of the stones its empty
        region touches if they are all one colour, else 0 (touches both colours, or no stone at all)."""
        owner = self.stones.copy()
        nbrs = neighbour_lists(self.size)
        done = np.zeros(self.num_points, dtype=bool)
        for start in np.flatnonzero(self.stones == EMPTY):
            if done[start]:
                continue
            members = flood_fill(self.stones, int(start), self.size)
            done[members] = True
            touched = {int(self.stones[nb]) for p in members for nb in nbrs[p]} - {EMPTY}
            if touched == {BLACK}:
                owner[members] = BLACK
            elif touched == {WHITE}:
                owner[members] = WHITE
        return owner

    def area(self, color: int) -> int:
        """Number of points owned by ``color``."""
        return int(np.sum(self.ownership() == color))

    def area_score(self) -> float:
        """Black area - white area - komi."""
        owner = self.ownership()
        return float(np.sum(owner == BLACK)) - float(np.sum(owner == WHITE)) - self.komi


_OFF = 2  # colour of the padding point in _padded_tables lookups


@functools.lru_cache(maxsize=None)
def _padded_tables(size: int) -> tuple[np.ndarray, np.ndarray]:
    """int [P, 4] orthogonal and diagonal neighbour tables, with the padding index P for off-board."""
    points = size * size
    tables = []
    for rows in (neighbour_lists(size), diagonal_lists(size)):
        table = np.full((points, 4), points, dtype=np.int64)
        for point, around in enumerate(rows):
            table[point, : len(around)] = around
        tables.append(table)
    return tables[0], tables[1]


def _liberties(stones: np.ndarray, members, size: int) -> np.ndarray:
    """bool [P]: distinct empty points adjacent to any of ``members``."""
    libs = np.zeros(size * size, dtype=bool)
    nbrs = neighbour_lists(size)
    for point in members:
        for nb in nbrs[point]:
            if stones[nb] == EMPTY:
                libs[nb] = True
    return libs


def random_positions(size: int, count: int, seed: int, max_moves: int | None = None, komi: float = 7.5):
    """Positions reached by uniformly random legal play (captures and kos included), for tests of fast paths.

    Each of the ``count`` games plays a random number of moves in [0, max_moves) (default 2 N^2), stopping early
    when no legal point is left.  Returns (boards: list of ``ReferenceBoard``, last_moves int32 [count, 2]: the
    last move and the one before it, -1 where none).
    """
    rng = np.random.default_rng(seed)
    boards, last = [], []
    for _ in range(count):
        board = ReferenceBoard(size, komi=komi)
        history = [-1, -1]
        for _ in range(int(rng.integers(0, max_moves or 2 * size * size))):
            legal = np.flatnonzero(board.legal_mask()[:-1])
            if not len(legal):
                break
            move = int(rng.choice(legal))
            board.play(move)
            history.append(move)
        boards.append(board)
        last.append(history[-1:-3:-1])
    return boards, np.array(last, np.int32).reshape(count, 2)
