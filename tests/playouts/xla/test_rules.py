"""MoGo-style rule policy: the shape-pattern table on ASCII boards, and the tier weights."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgo.features import moves as mf
from jaxgo.go import rules
from jaxgo.go.coords import BLACK, WHITE
from jaxgo.go.reference import ReferenceBoard, random_positions
from jaxgo.playouts.xla import rules as rp


def codes_of(text: str, to_play: int) -> tuple[np.ndarray, int]:
    board = ReferenceBoard.from_ascii(text, to_play=to_play)
    state = rules.from_board(np.asarray(board.stones), to_play=to_play)
    return np.asarray(mf.pattern_codes(state)), board.size


def point(text: str, row: int, col: int) -> int:
    size = len([line for line in text.strip().splitlines() if line.strip()])
    return row * size + col


def matches(text: str, row: int, col: int, to_play: int = BLACK) -> bool:
    codes, _ = codes_of(text, to_play)
    return bool(rp.pattern_table()[codes[point(text, row, col)] & 0xFFFF])


# The move is always at row 2, column 2 (0-based) of these 5x5 boards.
HANE = """
. . . . .
. X O X .
. . . . .
. . . . .
. . . . .
"""
EMPTY_AROUND = """
. . . . .
. . . . .
. . . . .
. . . . .
. . . . .
"""
LONELY_STONE = """
. . . . .
. . X . .
. . . . .
. . . . .
. . . . .
"""
CUT = """
. . . . .
. X O . .
. O . . .
. . . . .
. . . . .
"""
CUT_PROTECTED = """
. . . . .
. X O . .
. O . O .
. . . . .
. . . . .
"""


def test_table_covers_every_code_once():
    table = rp.pattern_table()
    assert table.shape == (4 ** 8,) and table.dtype == bool
    assert 0 < table.sum() < len(table)
    assert not table[0]  # nothing matches an empty neighbourhood


@pytest.mark.parametrize("to_play", [BLACK, WHITE])
def test_hane_matches_for_both_colours(to_play):
    assert matches(HANE, 2, 2, to_play)


def test_empty_and_lonely_stone_do_not_match():
    assert not matches(EMPTY_AROUND, 2, 2)
    assert not matches(LONELY_STONE, 2, 2)


def test_cut_and_its_exception():
    assert matches(CUT, 2, 2)
    assert matches(CUT, 2, 2, WHITE)
    # A white stone protecting the cutting point (the "o" cell) removes the unprotected-cut match for the
    # cut at (2, 2): what matches there now must come from another pattern, and none applies to this shape.
    assert not matches(CUT_PROTECTED, 2, 2)


def test_edge_patterns_need_the_edge():
    on_edge = """
. . . . .
. . . . .
. . . . .
. . X . .
. . . O .
"""
    off_edge = """
. . . . .
. . X . .
. . . O .
. . . . .
. . . . .
"""
    # "edge: block side connection": X above the move, O beside it, the move on the first line.  Away from
    # the edge no pattern covers this shape.
    assert matches(on_edge, 4, 2)
    assert not matches(off_edge, 2, 2)


def test_table_is_symmetric_under_rotation_and_reflection():
    rng = np.random.default_rng(0)
    grid = rp._cell_values()
    table = rp.pattern_table()
    codes = rng.integers(0, 4 ** 8, 2000)
    weights = 1 << (2 * np.arange(8))
    for code in codes:
        for variant in rp._symmetries(grid[code]):
            other = sum(int(variant[1 + dr, 1 + dc]) * int(w) for (dr, dc), w in zip(rp.CELLS, weights))
            assert table[other] == table[code]


def test_table_is_colour_symmetric():
    grid = rp._cell_values()
    swapped = np.where(grid == rp.OWN, rp.OPPONENT, np.where(grid == rp.OPPONENT, rp.OWN, grid))
    weights = 1 << (2 * np.arange(8))
    codes = sum(swapped[:, 1 + dr, 1 + dc].astype(np.int64) * w for (dr, dc), w in zip(rp.CELLS, weights))
    table = rp.pattern_table()
    assert np.array_equal(table[codes], table)


def test_tier_weights_order():
    table = jnp.asarray(rp.pattern_table())
    hane_codes, _ = codes_of(HANE, BLACK)
    hane = int(hane_codes[point(HANE, 2, 2)])
    code = jnp.array([0, hane, hane, 0, 0, 0])
    capture = jnp.array([0, 0, 0, 0, 1, 1])
    extension = jnp.array([0, 0, 0, 1, 0, 0])
    dist_prev = jnp.array([1, 1, 5, 0, 0, 0])
    candidate = jnp.array([True, True, True, True, True, False])
    w = np.asarray(rp.tier_weights(code, capture, extension, dist_prev, candidate, table))
    assert w[0] == w[2] == rp.TIER_WEIGHTS[0]  # no shape / shape far from the previous move: plain
    assert w[1] == rp.TIER_WEIGHTS[1]  # shape next to the previous move
    assert w[3] == rp.TIER_WEIGHTS[2]  # save
    assert w[4] == rp.TIER_WEIGHTS[3]  # capture
    assert w[5] == 0.0  # not a candidate


def test_safe_variant_puts_joined_self_ataris_last():
    table = jnp.asarray(rp.pattern_table())
    hane_codes, _ = codes_of(HANE, BLACK)
    hane = int(hane_codes[point(HANE, 2, 2)])
    code = jnp.array([0, 0, hane, hane])
    zeros = jnp.zeros(4, jnp.int32)
    dist_prev = jnp.array([0, 0, 1, 1])
    joined = jnp.array([False, True, False, True])
    candidate = jnp.ones(4, bool)
    plain = np.asarray(rp.tier_weights(code, zeros, zeros, dist_prev, candidate, table, joined))
    assert list(plain) == [rp.TIER_WEIGHTS[0], rp.TIER_WEIGHTS[0], rp.TIER_WEIGHTS[1], rp.TIER_WEIGHTS[1]]
    safe = rp.rule_tables(avoid_self_atari=True)
    w = np.asarray(rp.tier_weights(code, zeros, zeros, dist_prev, candidate, table, joined,
                                   safe.self_atari_factor))
    assert w[0] == rp.TIER_WEIGHTS[0] and w[2] == rp.TIER_WEIGHTS[1]  # the others keep their tiers
    assert 0 < w[3] < w[0] and 0 < w[1] < w[3]  # a joined self-atari, even a shape move, comes after them all
    assert float(rp.rule_tables().self_atari_factor) == 1.0  # the plain policy: no change


# -- playouts with the rule policy (``jaxgo.playouts.xla.heavy`` with ``rule_policy.rule_tables()``) -----------------
KOMI = 7.5


def _reference_code(board: ReferenceBoard, move: int) -> int:
    """Raw 3x3 code (low 16 bits) of ``move`` relative to the side to move, from the reference board."""
    size, row, col = board.size, divmod(move, board.size)[0], move % board.size
    code = 0
    for i, (dr, dc) in enumerate(rp.CELLS):
        r, c = row + dr, col + dc
        if not (0 <= r < size and 0 <= c < size):
            value = rp.OFF_BOARD
        else:
            stone = int(board.stones[r * size + c])
            value = rp.EMPTY if stone == 0 else (rp.OWN if stone == board.to_play else rp.OPPONENT)
        code |= value << (2 * i)
    return code


def _candidate_facts(board: ReferenceBoard, prev: int) -> dict:
    """What the rule tiers are made of, per point (bool [P]), found by playing each candidate (legal, not an own
    eye) on a copy of the reference board: ``candidate``; ``capture``; ``save`` (an own chain next to it in atari,
    the move left with two liberties or more); ``shape`` (next to the previous move and a shape pattern);
    ``atari`` (next to the previous move and leaving an opponent chain beside it one liberty); ``joined_self_atari``
    (joins an own chain, captures nothing and is left one liberty)."""
    size, points = board.size, board.size ** 2
    facts = {name: np.zeros(points, bool) for name in ("capture", "save", "shape", "atari", "joined_self_atari")}
    facts["candidate"] = board.legal_mask()[:-1] & ~board.eye_mask(board.to_play)
    table = rp.pattern_table()
    for move in np.flatnonzero(facts["candidate"]):
        row, col = divmod(int(move), size)
        neighbours = [(row + dr) * size + col + dc for dr, dc in rp.CELLS[:4]
                      if 0 <= row + dr < size and 0 <= col + dc < size]
        after = board.copy()
        after.play(int(move))
        liberties = after.liberties(int(move)).sum()
        captured = any(board.stones[n] == -board.to_play and after.stones[n] == 0 for n in neighbours)
        own_in_atari = any(board.stones[n] == board.to_play and board.liberties(n).sum() == 1 for n in neighbours)
        near = 0 <= prev < points and max(abs(prev // size - row), abs(prev % size - col)) == 1
        joins = any(board.stones[n] == board.to_play for n in neighbours)
        facts["capture"][move] = captured
        facts["save"][move] = own_in_atari and liberties >= 2
        facts["shape"][move] = near and bool(table[_reference_code(board, int(move))])
        facts["atari"][move] = near and _ataris(board, after, neighbours)
        facts["joined_self_atari"][move] = joins and not captured and liberties == 1
    return facts


def _tiers(facts: dict, safe: bool = False, chase: bool = False) -> np.ndarray:
    """int [P]: the rule tier of every point (-100: not a candidate; 0 plain, 1 shape (with ``chase`` also an
    atari next to the previous move), 2 save, 3 capture; with ``safe``, 10 less for a joined self-atari)."""
    shape = facts["shape"] | (facts["atari"] if chase else False)
    tiers = np.select([facts["capture"], facts["save"], shape], [3, 2, 1], 0)
    if safe:
        tiers = tiers - 10 * facts["joined_self_atari"]
    return np.where(facts["candidate"], tiers, -100)


def _ataris(board: ReferenceBoard, after: ReferenceBoard, neighbours) -> bool:
    """Whether the move that turned ``board`` into ``after`` left an opponent chain next to it one liberty."""
    return any(board.stones[n] == -board.to_play and after.stones[n] != 0 and after.liberties(n).sum() == 1
               for n in neighbours)


@pytest.mark.parametrize("safe, chase", [(False, False), (True, False), (True, True)],
                         ids=["rules", "safe_rules", "safe_atari_rules"])
def test_rule_playouts_take_the_highest_tier_and_follow_the_rules(safe, chase):
    from jaxgo.playouts.xla import heavy as hp

    size, per_state = 7, 2
    boards, last = random_positions(size, 24, seed=3, komi=KOMI)
    states = [rules.from_board(b.stones, b.to_play).replace(ko=jnp.int32(b.ko_point)) for b in boards]
    states = jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *states)
    tables = rp.rule_tables(avoid_self_atari=safe, atari_near_previous=chase)
    result = hp.run(states, jax.random.PRNGKey(2), KOMI, gammas=tables,
                    num_per_state=per_state, record_moves=True, last_moves=last, lanes=16)
    points, checked, by_tier, avoidable, chased = size * size, 0, np.zeros(4, int), 0, 0
    for index in range(len(boards) * per_state):
        board, prev = boards[index // per_state].copy(), int(last[index // per_state, 0])
        played = np.asarray(result.moves[index])
        for move in played[played >= 0]:
            facts = _candidate_facts(board, prev)  # one pass over the candidates serves every tier variant
            tiers = _tiers(facts, safe, chase)
            where = f"playout {index}, move {move}\n"  # the board is drawn only for a failure's message
            if move == points:
                assert (tiers == -100).all(), f"passed with candidates left: {where}{board.to_ascii()}"
            else:
                assert tiers[move] == tiers.max(), (
                    f"tier {tiers[move]} chosen over {tiers.max()}: {where}{board.to_ascii()}")
                by_tier[tiers[move] % 10] += 1
                safe_tiers = tiers if safe else _tiers(facts, safe=True)
                avoidable += safe_tiers[move] < 0 <= safe_tiers.max()
                chased += bool(chase and tiers[move] % 10 == 1 and _tiers(facts, safe)[move] % 10 == 0)
                checked += 1
            board.play(int(move))
            prev = int(move)
        assert float(result.score[index]) == pytest.approx(board.area_score())
    assert checked > 1000
    assert (by_tier > 0).all(), by_tier  # every tier was exercised
    # Joined self-ataris with something else left: the plain policy plays them, the safe one never (the tier
    # check above), so these positions do exercise the difference.
    assert (avoidable > 0) != safe, avoidable
    assert (chased > 0) == chase, chased  # ataris next to the previous move raised to the shape tier: chase only
