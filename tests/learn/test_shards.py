"""Training shards: extraction writes memory-mappable codes + a manifest, resumes after an interruption, and the
shards decode to the per-game features."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import json

import numpy as np
import pytest

from jaxgo.learn import shards
from jaxgo.features import game_features
from jaxgo.features.codes import decode
from jaxgo.learn.synthetic import random_game_sgf, write_archive
from jaxgo.go.sgf import load_sgf


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    folder = tmp_path_factory.mktemp("games")
    members = [(f"g{i}.sgf", random_game_sgf(9, 20 + i, seed=i)) for i in range(7)]
    members.insert(3, ("broken.sgf", b"(;GM[1]SZ[9];B[ee"))
    return write_archive(folder / "games.tar.gz", members), members


def test_extract_resumes_and_matches_one_shot(archive, tmp_path):
    path, members = archive
    one = shards.extract(tmp_path / "one", [path], shard_games=3, size=9, batch=16, progress=False)
    assert one["complete"] and [s["games"] for s in one["shards"]] == [3, 3, 1]
    assert one["skipped"] == {"unexpected end of SGF data": 1} or sum(one["skipped"].values()) == 1
    part = shards.extract(tmp_path / "two", [path], shard_games=3, size=9, batch=16, progress=False, stop_after=1)
    assert len(part["shards"]) == 1 and not part["complete"]
    (tmp_path / "two" / "shard-00001.codes.npy.tmp.npy").write_bytes(b"half-written by a killed run")
    again = shards.extract(tmp_path / "two", [path], shard_games=3, size=9, batch=16, progress=False)
    assert again["shards"] == [dict(s, seconds=t["seconds"]) for s, t in zip(one["shards"], again["shards"])]
    for name in shards.shard_names(tmp_path / "one"):
        a, b = shards.Shard(tmp_path / "one", name), shards.Shard(tmp_path / "two", name)
        assert np.array_equal(a.codes, b.codes) and np.array_equal(a.meta, b.meta)
    # re-running a complete folder does nothing; other settings in the same folder are refused
    assert shards.extract(tmp_path / "one", [path], shard_games=3, size=9, progress=False) == one
    with pytest.raises(ValueError):
        shards.extract(tmp_path / "one", [path], shard_games=2, size=9, progress=False)


def test_shards_of_an_older_feature_layout_are_refused(archive, tmp_path):
    path, _ = archive
    shards.extract(tmp_path, [path], shard_games=3, size=9, batch=16, progress=False, games=3)
    manifest = json.loads((tmp_path / shards.MANIFEST).read_text())
    (tmp_path / shards.MANIFEST).write_text(json.dumps(dict(manifest, version=1)))
    with pytest.raises(ValueError, match="feature layout version 1"):
        shards.shard_names(tmp_path)
    with pytest.raises(ValueError, match="extract them again"):
        shards.extract(tmp_path, [path], shard_games=3, size=9, progress=False)


def test_shard_contents_decode_to_game_features(archive, tmp_path):
    path, members = archive
    shards.extract(tmp_path, [path], shard_games=4, size=9, batch=16, progress=False)
    first = shards.Shard(tmp_path, "shard-00000")
    assert isinstance(first.codes, np.memmap) and first.codes.dtype == np.uint32 and first.codes.shape[1] == 82
    manifest = json.loads((tmp_path / shards.MANIFEST).read_text())
    assert manifest["shards"][0]["positions"] == len(first) == first.games[-1]
    record = load_sgf(members[1][1])  # the second kept game
    lo, hi = first.games[1], first.games[2]
    feats, legal, moves = game_features(record)
    got, got_legal = decode(first.codes[lo:hi], first.meta[lo:hi, 1], first.meta[lo:hi, 2])
    assert np.array_equal(np.asarray(got), feats) and np.array_equal(np.asarray(got_legal), legal)
    assert np.array_equal(first.meta[lo:hi, 0], moves) and np.array_equal(first.meta[lo:hi, 3], np.arange(hi - lo))
    c, m, v = shards.batches(first.codes, first.meta, 16)
    assert c.shape[1] == 16 and v.sum() == len(first) and not v[-1, -1] or v.size == len(first)
