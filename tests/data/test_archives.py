"""Streaming SGF records from tar.gz archives; broken records are skipped and counted."""

import io
import tarfile

import pytest

from jaxgo.go.coords import BLACK, WHITE
from jaxgo.data import (SkipStats, heldout_archives, is_pro_vs_pro, iter_archive, iter_records, kgs_split,
                        train_archives)
from jaxgo.util.paths import data_dir

GOOD = b"(;GM[1]FF[4]SZ[19]KM[0.5]HA[2]RE[W+3.5]AB[dp][pd];W[qp];B[];W[tt];B[dd])"
EVEN = b"(;GM[1]FF[4]SZ[19]KM[6.5]BR[P9\xe6\xae\xb5]WR[P3\xe6\xae\xb5]RE[B+R];B[pd];W[dp])"
SMALL = b"(;GM[1]FF[4]SZ[9]KM[7];B[ee])"
BROKEN = b"(;GM[1]FF[4]SZ[19];B[pd;W[zz"
NO_MOVES = b"(;GM[1]FF[4]SZ[19]KM[6.5])"
SETUP_AFTER_MOVE = b"(;GM[1]SZ[19];B[aa];AB[bb])"


def make_archive(path, members):
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_good_record_fields(tmp_path):
    path = make_archive(tmp_path / "a.tar.gz", [("g/good.sgf", GOOD), ("g/readme.txt", b"not sgf")])
    stats = SkipStats()
    (name, record), = list(iter_archive(path, stats))
    assert name == "g/good.sgf" and stats.read == 1 and stats.kept == 1 and stats.num_skipped == 0
    assert record.komi == 0.5 and record.handicap == 2 and record.result == "W+3.5"
    assert record.setup_black == sorted([15 * 19 + 3, 3 * 19 + 15]) and record.setup_white == []
    assert record.first_to_play() == WHITE
    assert [c for c, _ in record.moves] == [WHITE, BLACK, WHITE, BLACK]
    assert record.moves[1][1] == 361 and record.moves[2][1] == 361  # B[] and W[tt] are passes


def test_bad_records_skipped_and_counted(tmp_path):
    path = make_archive(tmp_path / "b.tar.gz", [
        ("1.sgf", BROKEN), ("2.sgf", GOOD), ("3.sgf", SMALL), ("4.sgf", NO_MOVES), ("5.sgf", SETUP_AFTER_MOVE),
        ("6.sgf", b"\x00\xff garbage"), ("7.sgf", EVEN)])
    stats = SkipStats()
    kept = [name for name, _ in iter_archive(path, stats)]
    assert kept == ["2.sgf", "7.sgf"]
    assert stats.read == 7 and stats.num_skipped == 5
    assert stats.skipped["board size 9"] == 1 and stats.skipped["no moves"] == 1
    assert [n for n, _ in iter_archive(path, size=None, limit=2)] == ["2.sgf", "3.sgf"]


def test_pro_filter_and_limit_over_archives(tmp_path):
    a = make_archive(tmp_path / "a.tar.gz", [("1.sgf", GOOD), ("2.sgf", EVEN)])
    b = make_archive(tmp_path / "b.tar.gz", [("3.sgf", EVEN)])
    assert is_pro_vs_pro(EVEN) and not is_pro_vs_pro(GOOD)
    assert not is_pro_vs_pro(EVEN.replace(b"WR[P3", b"WR[3"))
    stats = SkipStats()
    names = [n for n, _ in iter_records([a, b], stats, accept=is_pro_vs_pro)]
    assert names == ["2.sgf", "3.sgf"] and stats.skipped["not accepted by filter"] == 1
    assert [n for n, _ in iter_records([a, b], limit=1)] == ["1.sgf"]


def test_split_names_archives(tmp_path):
    kgs = tmp_path / "games" / "kgs-highdan"
    kgs.mkdir(parents=True)
    for name in ("KGS-2001-19-2298-.tar.gz", "KGS-2015-19-8133-.tar.gz", "KGS-2017_01-19-733-.tar.gz"):
        (kgs / name).write_bytes(b"")
    assert [p.name for p in train_archives(tmp_path)] == ["KGS-2001-19-2298-.tar.gz", "KGS-2015-19-8133-.tar.gz"]
    assert [p.name for p in heldout_archives(tmp_path)] == ["KGS-2017_01-19-733-.tar.gz"]
    assert heldout_archives(tmp_path, "fox") == []
    with pytest.raises(ValueError):
        heldout_archives(tmp_path, "nope")


def test_kgs_split_of_one_archive_name():
    assert kgs_split("KGS-2006-19-10388-.tar.gz") == "train"
    assert kgs_split("KGS-2017_06-19-910-.tar.gz") == "test"
    assert kgs_split("KGS-2016-19-1-.tar.gz") is None and kgs_split("fox-pro-games.tar.gz") is None
    assert kgs_split("KGS-2001-19-2298-.sgf") is None


def test_default_root_follows_jaxgo_data(tmp_path, monkeypatch):
    kgs = tmp_path / "games" / "kgs-highdan"
    kgs.mkdir(parents=True)
    (kgs / "KGS-2003-19-7582-.tar.gz").write_bytes(b"")
    monkeypatch.setenv("JAXGO_DATA", str(tmp_path))
    assert data_dir() == tmp_path
    assert [p.name for p in train_archives()] == ["KGS-2003-19-7582-.tar.gz"] and heldout_archives() == []


def test_real_archives_split():
    if not (data_dir() / "games" / "kgs-highdan").is_dir():
        pytest.skip(f"shared data not found at {data_dir()} (set JAXGO_DATA; a fresh clone has no ../shared)")
    train = {p.name for p in train_archives()}
    test = {p.name for p in heldout_archives()}
    assert len(train) == 5 and len(test) == 6 and not train & test
    stats = SkipStats()
    records = [r for _, r in iter_archive(sorted(heldout_archives())[0], stats, limit=20)]
    assert len(records) == 20 and all(r.size == 19 and r.moves for r in records)
