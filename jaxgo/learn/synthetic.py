"""Synthetic data for tests and benchmarks: Bradley-Terry positions with known gammas, random SGF games, shard
folders of random positions."""

from __future__ import annotations

import io
import tarfile

import numpy as np

from jaxgo.go.coords import colour_letter


def bt_positions(num_positions: int = 2000, candidates: int = 12, seed: int = 0):
    """Positions drawn from a known two-group team model.

    Group 0 uses indices 1..5 (index 0 = absent), group 1 indices 7..9 (index 6 = absent).  Returns
    (features int32 [N, C, 2], mask bool [N, C], winner int32 [N], true gammas float [10]).
    """
    rng = np.random.default_rng(seed)
    true = np.ones(10)
    true[1:6] = [0.2, 0.5, 1.0, 3.0, 8.0]
    true[7:10] = [0.3, 2.0, 5.0]
    g0 = rng.integers(0, 6, size=(num_positions, candidates))
    g1 = rng.choice([6, 7, 8, 9], size=(num_positions, candidates))
    features = np.stack([g0, g1], axis=-1).astype(np.int32)
    mask = np.ones((num_positions, candidates), bool)
    mask[:, -3:] = rng.random((num_positions, 3)) < 0.5
    strength = true[g0] * true[g1] * mask
    prob = strength / strength.sum(1, keepdims=True)
    winner = np.array([rng.choice(candidates, p=p) for p in prob], np.int32)
    return features, mask, winner, true


def random_game_sgf(size: int = 9, moves: int = 40, seed: int = 0) -> bytes:
    """An SGF record of a random legal game (uniform over legal non-pass moves; pass when none)."""
    from jaxgo.go.reference import ReferenceBoard
    from jaxgo.go.sgf import point_to_sgf

    rng = np.random.default_rng(seed)
    board = ReferenceBoard(size)
    parts = [f"(;GM[1]FF[4]SZ[{size}]KM[7.5]"]
    for _ in range(moves):
        legal = np.flatnonzero(board.legal_mask()[:-1])
        move = int(rng.choice(legal)) if len(legal) else size * size
        colour = colour_letter(board.to_play)
        parts.append(f";{colour}[{'' if move == size * size else point_to_sgf(move, size)}]")
        board.play(move)
    return ("".join(parts) + ")").encode()


def write_archive(path, members) -> str:
    """Write a tar.gz of (name, bytes) members; returns the path."""
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return str(path)


def random_shards(folder, num_shards: int = 3, positions: int = 40, seed: int = 0):
    """A shard folder (``jaxgo.learn.shards``) of ``num_shards`` shards of ``positions`` random 9x9 positions (two
    games each) whose played move favours capture level 1 and low pattern levels; returns the folder."""
    from pathlib import Path

    from jaxgo.features import GROUPS, group_sizes
    from jaxgo.features.codes import pack
    from jaxgo.learn import shards
    from jaxgo.util.files import write_json_atomic

    rng = np.random.default_rng(seed)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    sizes = group_sizes()
    for s in range(num_shards):
        levels = np.zeros((positions, 82, len(GROUPS)), np.int32)
        levels[:, :81, 0] = rng.integers(1, 30, size=(positions, 81))
        levels[:, :81, 1] = rng.integers(0, sizes[1], size=(positions, 81))
        levels[:, :81, 4] = rng.integers(0, sizes[4], size=(positions, 81))
        legal = rng.random((positions, 82)) < 0.8
        legal[:, 81] = True
        score = np.where(legal, (levels[..., 1] == 1) * 2.0 + (levels[..., 0] < 5) + rng.random((positions, 82)),
                         -1)
        moves = np.argmax(score, 1).astype(np.int16)
        codes = pack(levels, legal)
        games = [(codes[:positions // 2], moves[:positions // 2]), (codes[positions // 2:], moves[positions // 2:])]
        entries.append(shards.write_shard(folder, f"shard-{s:05d}", games))
    write_json_atomic(folder / shards.MANIFEST, {"version": shards.VERSION, "settings": {}, "shards": entries,
                                                 "complete": True, "skipped": {}, "read": 0})
    return folder
