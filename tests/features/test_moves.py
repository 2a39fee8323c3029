"""Move features against a slow numpy computation (flood fill, play each candidate on a ReferenceBoard)."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgo.features import GROUPS, canonical_pattern_table, move_features
from jaxgo.features.moves import _CELLS, symmetries
from jaxgo.go import rules
from jaxgo.go.coords import BLACK, WHITE
from jaxgo.go.reference import ReferenceBoard

G = {name: i for i, name in enumerate(GROUPS)}


@functools.lru_cache(maxsize=None)
def _jitted():
    return jax.jit(move_features)


def features_of(board: ReferenceBoard, prev=-1, prev2=-1, ko=-1):
    state = rules.from_board(board.stones, to_play=board.to_play)
    state = state.replace(ko=jnp.int32(ko))
    table = jnp.asarray(canonical_pattern_table()[0])
    levels, legal = _jitted()(state, jnp.int32(prev), jnp.int32(prev2), table)
    return np.asarray(levels), np.asarray(legal)


def slow_features(board: ReferenceBoard, point: int, prev: int, prev2: int, ko: bool):
    """Obvious computation for one legal point: play it on a copy and count liberties by flood fill."""
    n = board.size
    own = board.to_play
    after = board.copy()
    after.play(point)
    captured_points = [q for q in range(n * n) if board.stones[q] == -own and after.stones[q] == 0]
    capture = 0
    if captured_points:
        capture = 2 if prev in captured_points else 1
        saved = any(board.stones[r] == own and _libs(board, r) == 1 for q in captured_points for r in _nbrs(q, n))
        capture = 3 if saved else capture
    nbrs = [q for q in _nbrs(point, n)]
    own_atari_before = any(board.stones[q] == own and _libs(board, q) == 1 for q in nbrs)
    libs_after = _libs(after, point)
    extension = int(own_atari_before and (libs_after >= 2 or bool(captured_points)))
    self_atari = int(libs_after == 1 and not captured_points)
    atari = 0
    if not captured_points and any(after.stones[q] == -own and _libs(after, q) == 1 for q in nbrs):
        atari = 2 if ko else 1

    def dist(m):
        if m < 0 or m >= n * n:
            return 0
        dr, dc = abs(point // n - m // n), abs(point % n - m % n)
        return min(dr + dc + max(dr, dc), 17) - 1

    r, c = divmod(point, n)
    line = min(min(r, c, n - 1 - r, n - 1 - c) + 1, 5)
    return {"capture": capture, "extension": extension, "self_atari": self_atari, "atari": atari,
            "dist_prev": dist(prev), "dist_prev2": dist(prev2), "line": line}


def _libs(board, point):
    return int(np.sum(board.liberties(point)))


def _nbrs(p, n):
    r, c = divmod(p, n)
    return [rr * n + cc for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)) if 0 <= rr < n and 0 <= cc < n]


def slow_pattern_key(board: ReferenceBoard, point: int):
    """Canonical 3x3 pattern as a tuple (min over the 8 symmetries of the grid of (colour, atari))."""
    n, own = board.size, board.to_play

    def cell(dr, dc):
        r, c = divmod(point, n)
        r, c = r + dr, c + dc
        if not (0 <= r < n and 0 <= c < n):
            return (3, 0)
        s = board.stones[r * n + c]
        colour = 0 if s == 0 else (1 if s == own else 2)
        atari = int(s != 0 and abs(dr) + abs(dc) == 1 and _libs(board, r * n + c) == 1)
        return (colour, atari)

    keys = []
    for t in symmetries():
        keys.append(tuple(cell(*t(dr, dc)) for dr, dc in _CELLS))
    return min(keys)


SAVING_CAPTURE = """
. . . . . . .
. . O X . . .
. O X O . . .
. . . X . . .
. . . . . . .
. . . . . . O
. . . . . . X
"""


def test_capture_that_saves_an_own_chain_in_atari():
    board = ReferenceBoard.from_ascii(SAVING_CAPTURE, to_play=BLACK)
    pt = lambda r, c: r * 7 + c  # noqa: E731
    levels, _ = features_of(board, prev=pt(2, 3))
    # E5 (2, 4) captures O at (2, 3), which presses on X (2, 2) in atari: level 3 even though O (2, 3) is the
    # previous move (level 2 otherwise).  C4 (3, 2) is the plain escape from atari.
    assert levels[pt(2, 4), G["capture"]] == 3
    assert levels[pt(3, 2), G["capture"]] == 0 and levels[pt(3, 2), G["extension"]] == 1
    assert levels[pt(6, 5), G["capture"]] == 0 and levels[pt(6, 5), G["extension"]] == 1  # X (6, 6) escapes
    board.to_play = WHITE
    levels, _ = features_of(board)
    assert levels[pt(3, 2), G["capture"]] == 3  # capturing X (2, 2) saves O (2, 3) in atari
    assert levels[pt(6, 5), G["capture"]] == 1  # X (6, 6) touches no White chain in atari: a plain capture


BOARD = """
. O X . . . O
. X . . . . X
. . . X X . O
. . . O O X .
. . . X . . .
. O . . . . .
. O . . . . .
"""


def test_hand_made_position():
    board = ReferenceBoard.from_ascii(BOARD, to_play=BLACK)
    pt = lambda r, c: r * 7 + c  # noqa: E731
    levels, legal = features_of(board, prev=pt(0, 1), prev2=pt(6, 6))
    assert levels[pt(0, 0), G["capture"]] == 2  # captures the stone just played
    assert levels[pt(0, 5), G["capture"]] == 3  # captures O (0, 6), saving X (1, 6) in atari
    assert levels[pt(3, 2), G["atari"]] == 1 and levels[pt(4, 4), G["atari"]] == 1
    assert levels[pt(1, 5), G["extension"]] == 1  # saves X at (1,6)
    assert levels[pt(6, 0), G["self_atari"]] == 1 and levels[pt(6, 0), G["line"]] == 1
    assert not levels[pt(3, 3)].any()  # occupied point: all zero
    assert levels[pt(3, 1), G["line"]] == 2 and levels[pt(3, 2), G["line"]] == 3
    assert levels[pt(0, 0), G["dist_prev"]] == 2 - 1 and levels[pt(6, 5), G["dist_prev2"]] == 2 - 1
    assert levels[pt(2, 2), G["dist_prev"]] == 5 - 1  # |dr| = 2, |dc| = 1: d = 2 + 1 + 2
    assert legal[49] and levels[49, G["pass"]] == 1 and levels[49, G["pattern"]] == 0
    levels_ko, _ = features_of(board, prev=pt(0, 1), prev2=pt(6, 6), ko=pt(5, 5))
    assert levels_ko[pt(3, 2), G["atari"]] == 2
    levels_pp, _ = features_of(board, prev=49)
    assert levels_pp[49, G["pass"]] == 2 and levels_pp[pt(0, 0), G["dist_prev"]] == 0


@pytest.mark.parametrize("seed", range(16))
def test_features_match_slow_on_random_positions(seed):
    rng = np.random.default_rng(seed)
    n = 7
    board = ReferenceBoard(n)
    history = [-1, -1]
    for _ in range(int(rng.integers(15, 35))):
        moves = [m for m in range(n * n) if board.is_legal(m)]
        if not moves:
            break
        m = int(rng.choice(moves))
        board.play(m)
        history.append(m)
    prev, prev2 = history[-1], history[-2]
    ko = int(board.ko_point)
    levels, legal = features_of(board, prev=prev, prev2=prev2, ko=ko)
    assert np.array_equal(legal, board.legal_mask())
    from jaxgo.features import group_sizes
    assert np.all((levels >= 0) & (levels < group_sizes()))  # every level inside its own group
    pattern_ids = {}
    for point in range(n * n):
        if not legal[point]:
            assert not levels[point].any()
            continue
        expect = slow_features(board, point, prev, prev2, ko >= 0)
        got = {name: int(levels[point, G[name]]) for name in expect}
        assert got == expect, (point, board.to_ascii())
        key = slow_pattern_key(board, point)
        pattern_ids.setdefault(key, set()).add(int(levels[point, G["pattern"]]))
    # same canonical pattern <=> same id
    assert all(len(ids) == 1 for ids in pattern_ids.values())
    all_ids = [next(iter(ids)) for ids in pattern_ids.values()]
    assert len(set(all_ids)) == len(all_ids)


def test_pattern_ids_invariant_under_symmetry_and_colour():
    board = ReferenceBoard.from_ascii(BOARD, to_play=BLACK)
    levels, _ = features_of(board)
    n = 7
    grid = board.stones.reshape(n, n)
    for variant in (np.rot90(grid), np.fliplr(grid), grid.T):
        other = ReferenceBoard.from_stones(variant.reshape(-1), to_play=BLACK)
        lv, _ = features_of(other)
        assert sorted(lv[:n * n, G["pattern"]].tolist()) == sorted(levels[:n * n, G["pattern"]].tolist())
    swapped = ReferenceBoard.from_stones(-board.stones, to_play=WHITE)
    lv, _ = features_of(swapped)
    assert np.array_equal(lv[:, G["pattern"]], levels[:, G["pattern"]])


# After W played at (1,2) (joining (1,1)) and B captured both stones with (1,3), White is to move: (1,2), the
# point of the move before the previous one, is empty and legal again (its neighbour (1,1) is empty too).
RETAKE = """
. X X . .
X . . X .
. X X . .
. . . . .
. . . . .
"""


def test_retaking_the_point_of_a_captured_stone_stays_in_its_group():
    """The KGS blow-up: distance 0 to the move before the previous one (legal again after a capture) gave level
    -1, i.e. the last level of dist_prev; it must be dist_prev2's own SAME_POINT_LEVEL, inside the group."""
    from jaxgo.features import group_sizes
    from jaxgo.features.moves import SAME_POINT_LEVEL

    board = ReferenceBoard.from_ascii(RETAKE, to_play=WHITE)
    pt = lambda r, c: r * 5 + c  # noqa: E731
    levels, legal = features_of(board, prev=pt(1, 3), prev2=pt(1, 2))
    assert legal[pt(1, 2)] and legal[pt(1, 1)]
    assert levels[pt(1, 2), G["dist_prev2"]] == SAME_POINT_LEVEL
    assert levels[pt(1, 1), G["dist_prev2"]] == 2 - 1
    assert np.all((levels >= 0) & (levels < group_sizes()))


def test_check_levels_rejects_out_of_range():
    from jaxgo.features import group_sizes
    from jaxgo.features.games import check_levels

    levels = np.zeros((3, len(GROUPS)), np.int32)
    check_levels(levels)
    levels[1, G["dist_prev2"]] = group_sizes()[G["dist_prev2"]]
    with pytest.raises(ValueError):
        check_levels(levels)
    levels[1, G["dist_prev2"]] = -1
    with pytest.raises(ValueError):
        check_levels(levels)


def images_of_code(code: int) -> list[int]:
    """The raw 3x3 codes of ``code`` under the 8 symmetries, cell by cell (the slow definition)."""
    images = []
    for transform in symmetries():
        out = 0
        for i, cell in enumerate(_CELLS):
            j = _CELLS.index(transform(*cell))
            out |= ((code >> (2 * i)) & 3) << (2 * j)
            if i < 4:
                out |= ((code >> (16 + i)) & 1) << (16 + j)
        images.append(out)
    return images


def test_pattern_table_numbers_the_symmetry_classes_by_their_smallest_code():
    table, count = canonical_pattern_table()
    codes = np.random.default_rng(0).integers(0, 1 << 20, 3000)
    smallest = {}
    for code in codes.tolist():
        images = images_of_code(code)
        assert {int(table[image]) for image in images} == {int(table[code])}
        smallest[int(table[code])] = min(images)
    ids = sorted(smallest)
    assert [smallest[i] for i in ids] == sorted(smallest.values())  # ids in the order of the classes' minima
    assert table.dtype == np.int32 and int(table.min()) == 0 and int(table.max()) == count - 1
    assert int(table[0]) == 0  # the all-empty code is the smallest of all
