"""The local variant of the native rule playouts (``local_rules``) against the reference board: every move of
its playouts lies in the tiers a slow reading of the position allows (the last move's ataris, its two-liberty
fights, then shapes, captures anywhere and the rest), the forced defences are played, the local tiers are
taken about LOCAL_PERCENT of the time, and the XLA backend refuses it."""

from __future__ import annotations

import numpy as np
import pytest
from playouts.native.test_playouts import play
from playouts.native.test_rules import shape_code

from jaxgo.go import ladder as host
from jaxgo.go.hostboard import Board
from jaxgo.go.reference import ReferenceBoard, random_positions
from jaxgo.playouts.evaluator import make_evaluator
from jaxgo.playouts.native import board as nb
from jaxgo.playouts.native import local, runner
from jaxgo.playouts.xla import rules as rp

BASE, BUDGET, _ = runner.LADDER_POLICIES["local_rules"]


def local_policy():
    return runner.rule_policy(rp.tables_of_policy(BASE), BUDGET, local=True)


def neighbours(size: int, point: int) -> list[int]:
    row, col = divmod(point, size)
    return [(row + dr) * size + col + dc for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
            if 0 <= row + dr < size and 0 <= col + dc < size]


class Reading:
    """What the side to move of a reference board may play, move by move (slow: every candidate played on a
    copy of the board)."""

    def __init__(self, board: ReferenceBoard):
        self.board, self.size, self.me = board, board.size, board.to_play
        self.legal = board.legal_mask()[:-1] & ~board.eye_mask(self.me)

    def libs(self, point: int) -> np.ndarray:
        return np.flatnonzero(self.board.liberties(point))

    def after(self, move: int) -> tuple[ReferenceBoard, int, int]:
        """(board after the move, liberties of the new chain, stones captured)."""
        after = self.board.copy()
        after.play(move)
        captured = int((self.board.stones != 0).sum() + 1 - (after.stones != 0).sum())
        return after, int(after.liberties(move).sum()), captured

    def snapback(self, chain_point: int) -> bool:
        """Capturing the chain at ``chain_point`` (one liberty) takes one stone and leaves the capturing chain,
        two stones or more, in atari."""
        after, left, captured = self.after(int(self.libs(chain_point)[0]))
        return captured == 1 and left == 1 and after.chain(int(self.libs(chain_point)[0])).sum() >= 2

    def capture(self, chain_point: int) -> set[int]:
        lib = int(self.libs(chain_point)[0])
        return {lib} if self.legal[lib] and not self.snapback(chain_point) else set()

    def chains_next_to(self, chain_point: int, colour: int) -> list[int]:
        """One point of each chain of ``colour`` next to the chain at ``chain_point``."""
        seen, out = np.zeros(self.size ** 2, bool), []
        for stone in np.flatnonzero(self.board.chain(chain_point)):
            for n in neighbours(self.size, int(stone)):
                if self.board.stones[n] == colour and not seen[n]:
                    seen |= self.board.chain(n)
                    out.append(n)
        return out

    def defences(self, chain_point: int) -> tuple[set[int], set[int]]:
        """(counter-captures, escape) of the side to move's chain in atari at ``chain_point``."""
        counter = set()
        for other in self.chains_next_to(chain_point, -self.me):
            if len(self.libs(other)) == 1:
                counter |= self.capture(other)
        lib = int(self.libs(chain_point)[0])
        escape = set()
        if self.legal[lib]:
            _, left, captured = self.after(lib)
            lone_ko = (self.board.chain(chain_point).sum() == 1
                       and all(self.board.stones[n] == self.me for n in neighbours(self.size, lib)))
            laddered = False
            if not counter and not captured and left == 2:
                hosted = Board(self.size, self.board.stones.tolist(), self.me, self.board.ko_point)
                laddered = host.ladder_move(hosted.play(lib), lib, BUDGET, BUDGET) is not None
            if (left >= 2 or captured) and not lone_ko and not laddered:
                escape = {lib}
        return counter, escape

    def local_ataris(self, prev: int) -> tuple[set[int], bool]:
        """(moves, forced): the tier of the ataris next to the opponent's last move."""
        moves, forced = set(), False
        if len(self.libs(prev)) == 1:
            moves |= self.capture(prev)
        for n in neighbours(self.size, prev):
            if self.board.stones[n] == self.me and len(self.libs(n)) == 1:
                forced |= self.board.chain(n).sum() >= 3
                counter, escape = self.defences(n)
                moves |= counter | escape
        return moves, forced and bool(moves)

    def miai_safe(self, chain_point: int) -> bool:
        colour, chain = self.board.stones[chain_point], self.board.chain(chain_point)
        a, b = (int(x) for x in self.libs(chain_point))

        def joins(lib):
            return any(self.board.stones[n] == colour and not chain[n] and len(self.libs(n)) >= 2
                       for n in neighbours(self.size, lib))

        def opens(lib, other):
            return any(self.board.stones[n] == 0 and n != other for n in neighbours(self.size, lib))

        return (joins(a) and (joins(b) or opens(b, a))) or (joins(b) and opens(a, b))

    def ataris_on(self, chain_point: int) -> set[int]:
        """The side to move's plays on the two liberties of the chain at ``chain_point``."""
        owner, out = self.board.stones[chain_point], set()
        libs = [int(x) for x in self.libs(chain_point)]
        for lib, other in ((libs[0], libs[1]), (libs[1], libs[0])):
            if not self.legal[lib]:
                continue
            _, left, captured = self.after(lib)
            if left < 2 and not captured:
                continue
            around = [self.board.stones[n] for n in neighbours(self.size, lib)]
            empty = around.count(0)
            if owner == self.me and around.count(self.me) == 1 and (
                    empty == 1 or (empty == 2 and other in neighbours(self.size, lib))):
                continue  # a hopeless extension
            out.add(lib)
        return out

    def two_liberties(self, prev: int) -> set[int]:
        moves = set()
        if len(self.libs(prev)) == 2 and not self.miai_safe(prev):
            moves |= self.ataris_on(prev)
        seen = np.zeros(self.size ** 2, bool)
        for n in neighbours(self.size, prev):
            if self.board.stones[n] == self.me and not seen[n] and len(self.libs(n)) == 2 and not self.miai_safe(n):
                seen |= self.board.chain(n)
                moves |= self.ataris_on(n)
                for other in self.chains_next_to(n, -self.me):
                    libs = len(self.libs(other))
                    if libs == 1:
                        moves |= self.capture(other)
                    elif libs == 2:
                        moves |= self.ataris_on(other)
        return moves

    def rest(self, prev: int | None) -> set[int]:
        """The first of the shape tier, the captures anywhere and the rest that has a move (joined self-ataris
        set aside while anything else is left)."""
        table, shapes, shape_sa, joined_sa, plain = rp.pattern_table(), set(), set(), set(), set()
        captures = set()
        for move in np.flatnonzero(self.legal):
            move = int(move)
            _, left, captured = self.after(move)
            near = neighbours(self.size, move)
            own_in_atari = any(self.board.stones[n] == self.me and len(self.libs(n)) == 1 for n in near)
            joined = left == 1 and not captured and any(self.board.stones[n] == self.me for n in near)
            if captured:
                captures.add(move)
            row, col = divmod(move, self.size)
            is_plain = not captured and not (own_in_atari and left >= 2)
            if (prev is not None and max(abs(prev // self.size - row), abs(prev % self.size - col)) == 1
                    and is_plain and table[shape_code(self.board, move)]):
                (shape_sa if joined else shapes).add(move)
            (joined_sa if joined else plain).add(move)
        for tier in (shapes, captures, plain, shape_sa):
            if tier:
                return tier
        return joined_sa


def test_playout_moves_lie_in_the_tiers_the_reference_allows():
    size, per_state = 9, 2
    boards, last = random_positions(size, 20, seed=11, max_moves=55)
    raw = play(local_policy(), boards, last, per_state, seed=3)
    counts = {"atari": [0, 0], "two": [0, 0], "forced": 0, "checked": 0}
    for row in range(len(boards) * per_state):
        board, prev = boards[row // per_state].copy(), int(last[row // per_state, 0])
        for move in raw.trace[row][raw.trace[row] >= 0][:45]:
            move = int(move)
            reading = Reading(board)
            local = 0 <= prev < size * size and board.stones[prev] == -board.to_play
            ataris, forced = reading.local_ataris(prev) if local else (set(), False)
            two = reading.two_liberties(prev) if local and not forced else set()
            rest = reading.rest(prev if 0 <= prev < size * size else None)
            where = f"row {row}, move {move}, last {prev}\n{board.to_ascii()}"
            if move == size * size:
                assert not rest, f"passed with moves left: {where}"
            elif forced:
                assert move in ataris, f"a forced defence not played: {sorted(ataris)}: {where}"
                counts["forced"] += 1
            else:
                assert move in ataris | two | rest, (
                    f"outside the tiers: atari {sorted(ataris)}, two {sorted(two)}, rest {sorted(rest)}: {where}")
            if ataris and not forced:
                counts["atari"][0] += 1
                counts["atari"][1] += move in ataris
            elif not ataris and two:
                counts["two"][0] += 1
                counts["two"][1] += move in two
            counts["checked"] += 1
            board.play(move)
            prev = move
    assert counts["checked"] > 1500 and counts["forced"] > 5, counts
    for tier in ("atari", "two"):
        seen, taken = counts[tier]
        assert seen > 40 and 0.8 < taken / seen <= 1.0, (tier, counts)


def test_heavy_playouts_take_the_local_tiers_first():
    """``local_heavy``: a forced defence always, the local tiers' moves about LOCAL_PERCENT of the time or
    more where they have any, and the heavy draw elsewhere."""
    size, per_state = 9, 2
    boards, last = random_positions(size, 30, seed=12, max_moves=55)
    raw = play(make_evaluator("local_heavy", backend="native").native_policy(size), boards, last, per_state, seed=4)
    seen, taken, forced = 0, 0, 0
    for row in range(len(boards) * per_state):
        board, prev = boards[row // per_state].copy(), int(last[row // per_state, 0])
        for move in raw.trace[row][raw.trace[row] >= 0][:30]:
            move = int(move)
            if 0 <= prev < size * size and board.stones[prev] == -board.to_play:
                reading = Reading(board)
                ataris, must = reading.local_ataris(prev)
                tiers = ataris or (set() if must else reading.two_liberties(prev))
                if must:
                    assert move in ataris, f"row {row}: {sorted(ataris)}, {move}\n{board.to_ascii()}"
                    forced += 1
                elif tiers:
                    seen += 1
                    taken += move in tiers
            board.play(move)
            prev = move
    assert forced > 3 and seen > 100 and taken / seen > 0.8, (forced, seen, taken)


# Black's three stones on row 5 have one liberty left, at G5, after White's last stone (F4); Black to play.
FORCED = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . O O O . . .
. . O X X X . . .
. . . O O O . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""


@pytest.mark.parametrize("policy", ["local_rules", "local_heavy"])
def test_a_big_chain_in_atari_is_always_defended(policy):
    board = ReferenceBoard.from_ascii(FORCED)
    last = np.array([[5 * 9 + 5, -1]], np.int32)
    raw = play(make_evaluator(policy, backend="native").native_policy(9), [board], last, per_state=400, seed=2)
    assert (raw.trace[:, 0] == 4 * 9 + 6).all()  # the extension to three liberties, every time


# Black to play; White's H1 is in atari at G1, but Black's E1-F1 are in atari at G1 too: taking H1 there leaves
# Black's three stones one liberty, H1, where White takes them back.
SNAPBACK = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . O O O O X X
. . . O X X . O X
"""


def test_snapbacks_are_told_from_captures():
    board, size = ReferenceBoard.from_ascii(SNAPBACK), 9
    white = 8 * size + 7
    st, g = nb.new_board(size)
    nb.set_position(st, g, np.asarray(board.stones, np.int8), board.to_play, -1, 0, -1, -1, True)
    padded = int(nb.to_padded(np.array(white), size))
    assert local.is_snapback(st, g, st[nb.CHAIN, padded], nb.BLACK)
    assert Reading(board).snapback(white)
    board.stones[7 * size + 5] = 0  # F2 empty: Black's E1-F1 have two liberties, taking H1 keeps two
    st, g = nb.new_board(size)
    nb.set_position(st, g, np.asarray(board.stones, np.int8), board.to_play, -1, 0, -1, -1, True)
    assert not local.is_snapback(st, g, st[nb.CHAIN, padded], nb.BLACK)
    assert not Reading(ReferenceBoard.from_stones(board.stones)).snapback(white)


def test_the_xla_backend_refuses_it_and_first_move_probabilities_are_refused():
    with pytest.raises(ValueError, match="'local_rules'.*native only"):
        make_evaluator("local_rules", backend="xla")
    board = ReferenceBoard.from_ascii(FORCED)
    with pytest.raises(ValueError, match="no closed form"):
        runner.move_probabilities(local_policy(), board.stones, board.to_play)
