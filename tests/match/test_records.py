"""Game records read back from folders and tars of SGF files."""

from __future__ import annotations

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.match import read_game_records, sgf_files


def test_game_records_from_folders_and_tars_skip_and_count_broken_ones(tmp_path):
    game = b"(;GM[1]FF[4]SZ[9]KM[7.5];B[ee];W[cc])"
    for folder, name, data in (("a", "game_0000.sgf", game), ("a", "game_0001.sgf", b"(;SZ[9];B[ee"),
                               ("b", "game_0000.sgf", game)):
        (tmp_path / "games" / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / "games" / folder / name).write_bytes(data)
    import tarfile

    with tarfile.open(tmp_path / "games.tar.xz", "w:xz") as archive:
        for folder in ("a", "b"):
            archive.add(tmp_path / "games" / folder, arcname=folder)
    assert sorted(sgf_files(tmp_path / "games.tar.xz")) == ["a/game_0000.sgf", "a/game_0001.sgf", "b/game_0000.sgf"]
    assert sorted(sgf_files(tmp_path / "games.tar.xz", folder="b")) == ["b/game_0000.sgf"]
    assert sorted(sgf_files(tmp_path / "games", folder="a")) == ["a/game_0000.sgf", "a/game_0001.sgf"]

    records, broken = read_game_records([tmp_path / "games"], folder="a")
    assert broken == 1 and [name.split(":")[1] for name, _ in records] == ["a/game_0000.sgf"]
    assert records[0][1].gtp_moves() == [["B", "E5"], ["W", "C7"]]
    records, broken = read_game_records([tmp_path / "games.tar.xz", tmp_path / "games" / "b" / "game_0000.sgf"])
    assert (len(records), broken) == (3, 1)
