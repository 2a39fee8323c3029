"""Streaming SGF records from tar.gz archives; broken records are skipped and counted; damaged archives (cut,
flipped bytes, bad tar headers) are read up to the damage point, with what was lost counted."""

import gzip
import io
import random
import tarfile

import pytest

from jaxgo.data import (
    SkipStats,
    heldout_archives,
    is_pro_vs_pro,
    iter_archive,
    iter_members,
    iter_path,
    iter_records,
    kgs_split,
    train_archives,
)
from jaxgo.data.skips import DAMAGED_MEMBER
from jaxgo.go.coords import BLACK, WHITE
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


# -- damaged archives ------------------------------------------------------------------------------------------
def numbered_games(count: int) -> list[tuple[str, bytes]]:
    """``count`` distinct 9x9 records of 60 pseudo-random moves (a fixed seed per game, so the bytes are the same
    on every run and compress like real records, not like a repeated pattern)."""
    letters = "abcdefghi"
    games = []
    for i in range(count):
        rng = random.Random(i)
        moves = "".join(f";{'BW'[k % 2]}[{rng.choice(letters)}{rng.choice(letters)}]" for k in range(60))
        games.append((f"games/{i:04d}.sgf", f"(;GM[1]FF[4]SZ[9]KM[7]PC[game {i}]{moves})".encode()))
    return games


def tar_gz_bytes(members, plain: bool = False) -> bytes:
    """A tar archive of ``members`` (name, data), gzipped with a fixed time stamp so the bytes are the same on
    every run."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue() if plain else gzip.compress(buffer.getvalue(), mtime=0)


def read_members(path):
    stats = SkipStats()
    return list(iter_members(path, stats)), stats


def test_intact_archives_read_complete(tmp_path):
    games = numbered_games(40)
    for name, plain in (("a.tar.gz", False), ("a.tar", True)):
        path = tmp_path / name
        path.write_bytes(tar_gz_bytes(games + [("readme.txt", b"not a game")], plain))
        members, stats = read_members(path)
        assert members == games and stats.read == 40 and stats.complete and stats.damaged == []


def test_truncated_archive_yields_the_records_before_the_cut_and_says_so(tmp_path):
    games = numbered_games(200)
    whole = tar_gz_bytes(games)
    path = tmp_path / "cut.tar.gz"
    path.write_bytes(whole[:len(whole) // 2])
    members, stats = read_members(path)  # tarfile alone raises EOFError here
    assert 0 < len(members) < 200 and members == games[:len(members)]  # the good prefix, every byte intact
    (damage,) = stats.damaged
    assert damage["reason"].startswith("truncated") and not stats.complete
    assert damage["records_before"] == len(members) and damage["records_lost"] is None  # unknown: bytes are gone
    assert stats.read == len(members) + damage["records_dropped"] and damage["records_dropped"] <= 1
    assert stats.skipped[DAMAGED_MEMBER] == damage["records_dropped"]
    assert damage["offset"] == len(whole) // 2
    # Every rerun reads the same prefix and reports the same damage (nothing raises).
    stats2 = SkipStats()
    assert [n for n, _ in iter_archive(path, stats2, size=9)] == [n for n, _ in members]
    assert stats2.damaged == stats.damaged and stats2.kept == len(members)


def test_flipped_bytes_stop_at_the_damage_and_count_what_was_lost(tmp_path):
    games = numbered_games(200)
    data = bytearray(tar_gz_bytes(games))
    middle = len(data) // 2
    data[middle:middle + 64] = bytes(b ^ 0xFF for b in data[middle:middle + 64])
    path = tmp_path / "flipped.tar.gz"
    path.write_bytes(bytes(data))
    members, stats = read_members(path)  # tarfile alone stops silently here and gzip's CRC failure goes unseen
    assert 0 < len(members) < 200 and members == games[:len(members)]  # no garbled record gets through
    (damage,) = stats.damaged
    assert "CRC check failed" in damage["reason"] and not stats.complete
    assert damage["records_before"] == len(members) and damage["records_dropped"] == 1  # the one next to it
    assert 0 < damage["offset"] < len(data) and damage["bytes_lost"] == len(data) - damage["offset"]
    lost = 200 - stats.read
    assert abs(damage["records_lost"] - lost) <= 0.1 * lost  # estimated from the gzip size field
    assert stats.lost == damage["records_lost"] and stats.broken == 1


def test_damage_in_one_archive_lets_the_next_one_be_read(tmp_path):
    games = numbered_games(60)
    whole = tar_gz_bytes(games[:50])
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(whole[:len(whole) // 3])
    good = tmp_path / "good.tar.gz"
    good.write_bytes(tar_gz_bytes(games[50:]))
    stats = SkipStats()
    names = [n for n, _ in iter_records([cut, good], stats, size=9)]
    assert names[-10:] == [n for n, _ in games[50:]] and len(names) > 10
    assert [d["path"] for d in stats.damaged] == [str(cut)]
    summary = stats.summary()
    assert summary["complete"] is False and summary["kept"] == len(names) and summary["damaged"] == stats.damaged


def test_tar_damage_under_intact_gzip_and_files_that_are_no_archive(tmp_path):
    games = numbered_games(6)
    tar = bytearray(tar_gz_bytes(games, plain=True))
    third = 2 * (512 + -(-len(games[0][1]) // 512) * 512)  # each member: a header and its data in 512-byte blocks
    tar[third + 10] ^= 0x55  # a byte of the third member's header: its checksum fails
    path = tmp_path / "header.tar.gz"
    path.write_bytes(gzip.compress(bytes(tar), mtime=0))
    members, stats = read_members(path)
    assert members == games[:2]
    (damage,) = stats.damaged
    assert damage["reason"] == f"invalid tar header at byte {third} of the archive data"
    assert damage["records_dropped"] == 0 and damage["records_lost"] == 4  # found by their headers
    for name, content in (("empty.tar.gz", b""), ("text.tar.gz", b"no archive here " * 50)):
        (tmp_path / name).write_bytes(content)
        members, stats = read_members(tmp_path / name)
        assert members == [] and stats.damaged[0]["reason"].startswith("not a tar archive")
    with pytest.raises(FileNotFoundError):
        read_members(tmp_path / "missing.tar.gz")


# -- hostile inputs (issue 47): members and files too big to read, FIFOs ------------------------------------
def test_an_oversized_member_is_skipped_unread_and_counted(tmp_path, monkeypatch):
    """A small archive may hold a huge member (a 1 MB tar.gz held a 1 GiB one and took 3.2 GB to read):
    members over the cap are stepped over, never read whole, and counted; the records after them are read."""
    import os

    from jaxgo.data import archives, skips

    big = b"(;GM[1]SZ[19];B[aa]" + b" " * 300_000 + b")"
    path = make_archive(tmp_path / "big.tar.gz", [("1.sgf", GOOD), ("huge.sgf", big), ("2.sgf", EVEN)])
    monkeypatch.setattr(archives, "MAX_RECORD_BYTES", 100_000)  # the default (8 MB) bound at call time
    stats = SkipStats()
    kept = [name for name, _ in iter_path(path, stats)]
    assert kept == ["1.sgf", "2.sgf"]
    assert stats.read == 3 and stats.skipped[skips.OVERSIZED] == 1 and stats.complete
    assert os.path.getsize(path) < 10_000  # a small archive ...
    stats = SkipStats()  # ... and the cap passed explicitly
    assert [n for n, _ in iter_members(path, stats, max_bytes=100_000)] == ["1.sgf", "2.sgf"]
    assert stats.skipped[skips.OVERSIZED] == 1


def test_a_fifo_named_like_a_record_is_skipped_not_waited_on(tmp_path):
    """A FIFO named x.sgf in a folder hung ``gammas extract`` and ``jaxgo analyze`` for good."""
    import os

    from jaxgo.data import skips

    (tmp_path / "a.sgf").write_bytes(GOOD)
    os.mkfifo(tmp_path / "x.sgf")
    (tmp_path / "z.sgf").write_bytes(EVEN)
    stats = SkipStats()
    kept = [os.path.basename(name) for name, _ in iter_path(tmp_path, stats)]
    assert kept == ["a.sgf", "z.sgf"] and stats.skipped[skips.NOT_REGULAR] == 1 and stats.read == 3
    stats = SkipStats()
    assert list(iter_path(tmp_path / "x.sgf", stats)) == [] and stats.skipped[skips.NOT_REGULAR] == 1
