"""Training shards: extraction writes memory-mappable codes + a manifest, resumes after an interruption, and the
shards decode to the per-game features."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import json

import jax
import numpy as np
import pytest

from jaxgo.features import game_features
from jaxgo.features.codes import decode
from jaxgo.go.sgf import load_sgf
from jaxgo.learn import shards
from jaxgo.learn.synthetic import random_game_sgf, write_archive


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
    # (decode compiled as one call: eagerly each of its operations compiles on its own)
    got, got_legal = jax.jit(decode)(first.codes[lo:hi], first.meta[lo:hi, 1], first.meta[lo:hi, 2])
    assert np.array_equal(np.asarray(got), feats) and np.array_equal(np.asarray(got_legal), legal)
    assert np.array_equal(first.meta[lo:hi, 0], moves) and np.array_equal(first.meta[lo:hi, 3], np.arange(hi - lo))
    c, m, v = shards.batches(first.codes, first.meta, 16)
    assert c.shape[1] == 16 and v.sum() == len(first) and not v[-1, -1] or v.size == len(first)


def test_a_process_share_of_the_batches_is_its_rows_of_every_batch(archive, tmp_path):
    path, _ = archive
    shards.extract(tmp_path, [path], shard_games=4, size=9, batch=16, progress=False)
    parts = [(s.codes, s.meta) for s in shards.iter_shards(tmp_path)]
    total = sum(len(m) for _, m in parts)
    whole = shards.batches_of(parts, total, 16)
    assert whole[2].sum() == total and not whole[2][-1, -1]  # the last batch is padded
    for lo, hi in [(0, 8), (8, 16), (4, 12)]:
        share = shards.batches_of(parts, total, 16, rows=(lo, hi))
        for a, b in zip(share, whole):
            assert np.array_equal(a, b[:, lo:hi])


def test_workers_write_the_one_process_shards_byte_for_byte_and_resume(archive, tmp_path):
    path, _ = archive
    kw = dict(shard_games=2, size=9, batch=16)
    one = shards.extract(tmp_path / "one", [path], progress=False, **kw)
    folder = tmp_path / "split"
    first = shards.extract_worker(folder, [path], worker=1, workers=2, stop_after=1, **kw)  # killed after a shard
    assert [e["index"] for e in first["shards"]] == [1] and not first["done"]
    assert shards.merge_workers(folder, 2) is None and shards.read_manifest(folder) is None
    assert shards.extract_worker(folder, [path], worker=0, workers=2, **kw)["done"]
    assert shards.merge_workers(folder, 2) is None  # worker 1 has not finished
    again = shards.extract_worker(folder, [path], worker=1, workers=2, **kw)
    assert [e["index"] for e in again["shards"]] == [1, 3] and again["done"]  # shard 1 was not redone
    merged = shards.merge_workers(folder, 2)

    def strip(m):  # the manifest without the timings
        return dict(m, shards=[{k: v for k, v in s.items() if k != "seconds"} for s in m["shards"]])

    assert strip(merged) == strip(one) and strip(shards.read_manifest(folder)) == strip(one)
    assert not list(folder.glob("worker-*.json"))
    names = sorted(p.name for p in (tmp_path / "one").glob("*.npy"))
    assert names == sorted(p.name for p in folder.glob("*.npy")) and len(names) == 12
    for name in names:
        assert (tmp_path / "one" / name).read_bytes() == (folder / name).read_bytes(), name


@pytest.mark.slow
def test_cli_extract_with_worker_processes(archive, tmp_path, capsys):
    from jaxgo.learn.cli import main

    path, _ = archive
    base = ["extract", "--games-path", path, "--size", "9", "--shard-games", "3", "--games", "5", "--no-progress"]
    assert main(base + ["--out", str(tmp_path / "one")]) == 0
    one = json.loads(capsys.readouterr().out)
    assert main(base + ["--out", str(tmp_path / "two"), "--workers", "2"]) == 0
    assert json.loads(capsys.readouterr().out) == one and one["games"] == 5 and not one["complete"]
    for name in shards.shard_names(tmp_path / "one"):
        for part in ("codes", "meta", "games"):
            file = f"{name}.{part}.npy"
            assert (tmp_path / "one" / file).read_bytes() == (tmp_path / "two" / file).read_bytes()
    assert main(base + ["--out", str(tmp_path / "two"), "--workers", "2", "--worker", "2"]) == 1
    assert "--worker must be in 0..1" in capsys.readouterr().err


# -- damaged archives and cut games (jaxgo.data's damage reports as extract passes them on) ------------------------
def test_extract_over_a_cut_archive_goes_on_counts_the_loss_and_is_never_complete(tmp_path, capsys):
    from jaxgo.learn.cli import main

    members = [(f"g{i:02d}.sgf", random_game_sgf(9, 30, seed=100 + i)) for i in range(40)]
    members.insert(1, ("illegal.sgf", b"(;GM[1]FF[4]SZ[9];B[ee];W[ee];B[dd])"))  # W plays on Black's stone
    whole = open(write_archive(tmp_path / "whole.tar.gz", members), "rb").read()
    (tmp_path / "cut.tar.gz").write_bytes(whole[:len(whole) // 2])
    argv = ["extract", "--games-path", str(tmp_path / "cut.tar.gz"), "--size", "9", "--shard-games", "8",
            "--no-progress", "--out", str(tmp_path / "shards")]
    reports = []
    for _ in range(2):  # a rerun reads the same records and reports the same damage (tarfile raised EOFError)
        assert main(argv) == 0
        captured = capsys.readouterr()
        reports.append(json.loads(captured.out))
        assert "damaged archive" in captured.err and "truncated" in captured.err
    report = reports[0]
    assert reports[1] == report and report["complete"] is False and 2 < report["games"] < 41
    (damage,) = report["damaged"]
    assert damage["reason"].startswith("truncated") and damage["records_lost"] is None
    assert damage["records_before"] == report["games"]  # every record before the cut is a good 9x9 game
    assert sum(report["skipped"].values()) == damage["records_dropped"] <= 1  # the one the cut went through
    assert report["cut_games"] == 1  # the illegal record is used up to its illegal move, and counted
