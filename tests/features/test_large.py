"""Large shape patterns: canonical hashes are invariant to the 8 symmetries and to colour swap + side to move,
nested by Coulom's distance, equal between the board-wide and the per-point form; the dictionary keeps frequent
patterns and a candidate takes its largest one; harvest, extraction, training and evaluation carry the group."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgo.features import gammas as gm
from jaxgo.features import large, num_features
from jaxgo.features.codes import decode
from jaxgo.features.games import games_codes, games_played_hashes
from jaxgo.features.moves import symmetries
from jaxgo.go import reference, rules
from jaxgo.go.coords import BLACK, WHITE
from jaxgo.go.sgf import load_sgf
from jaxgo.learn import shards
from jaxgo.learn.patterns import harvest
from jaxgo.learn.synthetic import random_game_sgf, write_archive

hashes_of = jax.jit(large.board_hashes)
point_hashes_of = jax.jit(large.point_hashes)
all_point_hashes = jax.jit(lambda st: jax.vmap(lambda p: large.point_hashes(st, p))(
    jnp.arange(st.stones.shape[0])))  # [P, S, 8]
all_point_cells = jax.jit(lambda st: jax.vmap(lambda p: large.point_cells(st, p))(
    jnp.arange(st.stones.shape[0])))  # [P, O]


def dictionary_of(st, points=None, min_count=1):
    """The dictionary of the patterns around ``points`` (default: every point) of one position."""
    h, c = np.asarray(all_point_hashes(st)), np.asarray(all_point_cells(st))
    points = np.arange(len(h)) if points is None else np.asarray(points)
    return large.LargeDictionary.from_occurrences(h[points], c[points], min_count)


def state_of(stones, to_play=BLACK):
    return rules.from_board(np.asarray(stones, np.int8), to_play=to_play)


def transform(stones, size, t):
    """The board under symmetry t (``jaxgo.features.moves.symmetries`` order) about the centre, and the point
    map."""
    transform = symmetries()[t]
    grid = np.asarray(stones).reshape(size, size)
    out = np.zeros_like(grid)
    mapping = np.zeros(size * size, np.int64)
    half = (size - 1) // 2
    for r in range(size):
        for c in range(size):
            dr, dc = transform(r - half, c - half)
            r2, c2 = half + dr, half + dc
            out[r2, c2] = grid[r, c]
            mapping[r * size + c] = r2 * size + c2
    return out.reshape(-1), mapping


def test_offsets_are_nested_by_coulom_distance():
    offs = large.offsets()
    d = np.array([large.coulom_distance(*o) for o in offs])
    assert np.all(np.diff(d) >= 0) and d[0] == 2 and d[-1] == large.MAX_SIZE
    assert large.prefix_lengths().tolist() == [12, 20, 28, 36, 48, 60, 72]
    # every prefix is closed under the 8 symmetries
    for n in large.prefix_lengths():
        cells = {tuple(o) for o in offs[:n]}
        assert cells == {(c, r) for r, c in cells} == {(-r, c) for r, c in cells}


@pytest.mark.parametrize("seed", [0, 1])
def test_frame_hashes_are_permuted_by_the_eight_symmetries(seed):
    boards, _ = reference.random_positions(9, 5, seed, 60)
    for board in boards:
        base = np.sort(np.asarray(all_point_hashes(state_of(board.stones, board.to_play))), axis=-1)
        for t in range(8):
            stones, mapping = transform(board.stones, 9, t)
            moved = np.sort(np.asarray(all_point_hashes(state_of(stones, board.to_play))), axis=-1)
            assert np.array_equal(moved[mapping], base)  # same 8 hashes, so the same canonical (smallest) one


levels_of = jax.jit(large.candidate_levels)  # one compiled call per dictionary, not hundreds of eager operations


def test_levels_do_not_depend_on_the_orientation():
    boards, _ = reference.random_positions(9, 4, 7, 50)
    for board in boards:
        st = state_of(board.stones, board.to_play)
        d = dictionary_of(st)
        tables = tuple(jnp.asarray(x) for x in d.tables())
        legal = jnp.ones(82, bool)
        base = np.asarray(levels_of(st, legal, tables))[:81]
        assert np.all(base > 0)
        for t in range(8):
            stones, mapping = transform(board.stones, 9, t)
            moved = np.asarray(levels_of(state_of(stones, board.to_play), legal, tables))[:81]
            assert np.array_equal(moved[mapping], base)


def test_colour_swap_with_the_side_to_move_keeps_the_hash():
    boards, _ = reference.random_positions(9, 8, 3, 60)
    for board in boards:
        a = hashes_of(state_of(board.stones, BLACK))
        b = hashes_of(state_of(-board.stones, WHITE))
        c = hashes_of(state_of(board.stones, WHITE))
        assert np.array_equal(a, b)
        if np.any(board.stones != 0):
            assert not np.array_equal(a, c)


def test_board_wide_hashes_are_the_first_frame_of_the_per_point_ones():
    boards, _ = reference.random_positions(19, 3, 5, 300)
    for board in boards:
        st = state_of(board.stones, board.to_play)
        assert np.array_equal(np.asarray(all_point_hashes(st))[:, :, 0].T, np.asarray(hashes_of(st)))


def test_a_stone_changes_only_the_sizes_that_reach_it():
    empty = reference.ReferenceBoard.from_ascii("\n".join(["." * 9] * 9))
    centre = 4 * 9 + 4
    base = np.asarray(hashes_of(state_of(empty.stones)))[:, centre]
    for (dr, dc) in [(2, 0), (2, 1), (2, 2), (3, 1), (3, 2), (4, 1)]:
        stones = empty.stones.copy()
        stones[(4 + dr) * 9 + 4 + dc] = WHITE
        h = np.asarray(hashes_of(state_of(stones)))[:, centre]
        d = large.coulom_distance(dr, dc)
        for i, s in enumerate(large.SIZES):
            assert (h[i] == base[i]) == (s < d), (dr, dc, s)
    # the edge is seen: a point near the edge of an empty board differs from the centre from size 4 on
    near_edge = np.asarray(hashes_of(state_of(empty.stones)))[:, 1 * 9 + 4]
    assert near_edge[0] != base[0]


def test_dictionary_keeps_frequent_patterns_and_levels_take_the_largest(tmp_path):
    empty = state_of(np.zeros(361, np.int8))
    centre, corner = 9 * 19 + 9, 19 + 1
    # played three times in the middle of an empty board (all sizes the same), once near a corner
    d = dictionary_of(empty, [centre, centre - 1, centre + 19, corner], min_count=2)
    assert d.size_index.tolist() == list(range(len(large.SIZES))) and d.counts.tolist() == [3] * 7
    assert np.all(d.cells == 0)  # all empty
    h = np.asarray(all_point_hashes(empty))
    assert np.array_equal(d.variants, h[centre]) and np.array_equal(d.hashes, h[centre].min(1))
    tables = tuple(jnp.asarray(x) for x in d.tables())
    levels = np.asarray(large.candidate_levels(empty, jnp.ones(362, bool), tables))
    # the centre knows its size-10 pattern; 3 rows from the edge the pattern of size 8 reaches off the board
    # (d(4, 0) = 8), so the largest known is size 7; the corner point knows none; pass has level 0
    assert levels[centre] == 7 and levels[3 * 19 + 9] == 4 and levels[corner] == 0 and levels[361] == 0
    assert levels[3 * 19 + 9] == 1 + large.SIZES.index(7)
    # stored as frame-0 cells packed 4 per byte; reloaded cells give the same hashes; drawn as text
    d.save(tmp_path / "d.npz")
    again = large.LargeDictionary.load(tmp_path / "d.npz")
    assert again.fingerprint() == d.fingerprint() and np.array_equal(again.cells, d.cells)
    picture = d.ascii(0).splitlines()
    assert picture == ["  .", " ...", "..*..", " ...", "  ."]
    with pytest.raises(ValueError):  # entries out of order
        large.LargeDictionary(np.array([1, 0], np.int8), np.zeros((2, 72), np.uint8), np.array([1, 1]))


def test_cells_reproduce_the_frame_hashes_of_real_patterns():
    boards, _ = reference.random_positions(9, 3, 11, 50)
    for board in boards:
        st = state_of(board.stones, board.to_play)
        d = dictionary_of(st)  # min_count 1: every pattern around every point, its first occurrence's cells
        h = np.asarray(all_point_hashes(st))
        for i in range(0, len(d), 17):
            assert any(np.array_equal(d.variants[i], h[p, d.size_index[i]]) for p in range(81))


def test_played_hashes_follow_the_game(tmp_path):
    record = load_sgf(random_game_sgf(9, 30, seed=4))
    ((played, cells),) = games_played_hashes([record], batch=2)
    board = reference.ReferenceBoard(9)
    rows, cell_rows = [], []
    for colour, move in record.moves:
        board.to_play = colour
        if move < 81:
            st = state_of(board.stones, colour)
            rows.append(np.asarray(point_hashes_of(st, jnp.int32(move))))
            cell_rows.append(np.asarray(large.point_cells(st, jnp.int32(move))))
        board.play(move)
    assert np.array_equal(played, np.array(rows)) and np.array_equal(cells, np.array(cell_rows))


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    folder = tmp_path_factory.mktemp("large_games")
    members = [(f"g{i}.sgf", random_game_sgf(9, 40, seed=20 + i)) for i in range(6)]
    members.append(("broken.sgf", b"(;GM[1]SZ[9];B[ee"))
    return write_archive(folder / "games.tar.gz", members)


def test_harvest_extract_train_and_evaluate_carry_the_large_group(archive, tmp_path):
    from jaxgo.learn.train import train

    dictionary, summary = harvest([archive], min_count=2, size=9, progress=False)
    assert summary["games"] == 6 and summary["skipped"] and len(dictionary) == summary["entries"] > 0
    assert dictionary.counts.min() >= 2
    manifest = shards.extract(tmp_path / "sh", [archive], shard_games=3, size=9, progress=False, large=dictionary)
    assert manifest["settings"]["large"]["entries"] == len(dictionary)
    assert shards.large_dictionary(tmp_path / "sh").fingerprint() == dictionary.fingerprint()
    shard = shards.Shard(tmp_path / "sh", "shard-00000")
    assert shard.codes.shape[1:] == (82, 2)
    levels = shard.codes[..., 1]
    legal = (shard.codes[..., 0] >> 24) & 1
    assert levels.max() > 0 and np.all(levels[legal == 0] == 0) and levels.max() <= len(dictionary)
    # the base column equals the extraction without a dictionary, the large column decodes after the base groups
    plain = shards.extract(tmp_path / "plain", [archive], shard_games=3, size=9, progress=False)
    assert plain["shards"][0]["positions"] == manifest["shards"][0]["positions"]
    assert np.array_equal(shards.Shard(tmp_path / "plain", "shard-00000").codes, shard.codes[..., 0])
    feats, legal = jax.jit(decode)(shard.codes[:5], shard.meta[:5, 1], shard.meta[:5, 2])  # one compile
    assert feats.shape[-1] == 10 and np.all(np.asarray(feats[..., -1]) >= num_features())
    out = tmp_path / "large.npz"
    summary = train(tmp_path / "sh", "lmp", out, passes=2, batch=16)
    loaded = gm.load(out)
    assert loaded.large is not None and loaded.groups[-1] == "large" and loaded.compatible()
    assert loaded.sizes[-1] == len(dictionary) + 1 and np.any(loaded.group("large")[1:] != 0)
    assert loaded.base_log_gamma.shape == (num_features(),)
    # codes for scoring come with the dictionary's levels (a game and batch shaped as the extraction's: its compile)
    (codes, moves), = games_codes([load_sgf(random_game_sgf(9, 40, seed=21))], batch=16,
                                  large_dictionary=loaded.large)
    assert codes.shape == (40, 82, 2) and codes[..., 1].max() > 0


def test_cli_harvest_and_extract_with_a_dictionary(archive, tmp_path, capsys):
    from jaxgo.learn.cli import main

    patterns = tmp_path / "patterns.npz"
    assert main(["harvest", "--out", str(patterns), "--games-path", str(archive), "--size", "9",
                 "--min-count", "2", "--no-progress"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["entries"] == len(large.LargeDictionary.load(patterns))
    assert main(["extract", "--out", str(tmp_path / "sh"), "--games-path", str(archive), "--size", "9",
                 "--large", str(patterns), "--no-progress"]) == 0
    assert json.loads(capsys.readouterr().out)["games"] == 6
    assert main(["extract", "--out", str(tmp_path / "sh2"), "--games-path", str(archive), "--size", "9",
                 "--large", str(tmp_path / "missing.npz"), "--no-progress"]) == 1
