"""A full disk during `jaxgo gammas extract` and `train`: one clear error ("No space left on device"), exit
status 1, nothing half-written left behind, and the same command finishes the job once there is room."""

from __future__ import annotations

import json
import subprocess

import pytest

from jaxgo.learn.cli import main
from jaxgo.learn.synthetic import random_game_sgf


def grow(disk) -> None:
    subprocess.run(["mount", "-o", "remount,size=4m", str(disk)], check=True)


def leftovers(folder) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.name.endswith(".tmp")]


@pytest.fixture
def games(tmp_path):
    folder = tmp_path / "games"
    folder.mkdir()
    for i in range(12):
        (folder / f"{i}.sgf").write_bytes(random_game_sgf(9, 40, seed=i))
    return folder


def test_extract_stops_clearly_on_a_full_disk_and_resumes(small_disk, games, tmp_path, capsys):
    argv = ["extract", "--games-path", str(games), "--size", "9", "--shard-games", "2", "--no-progress"]
    assert main([*argv, "--out", str(small_disk / "shards")]) == 1
    assert "No space left on device" in capsys.readouterr().err
    assert leftovers(small_disk) == []
    grow(small_disk)
    assert main([*argv, "--out", str(small_disk / "shards")]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert main([*argv, "--out", str(tmp_path / "plain")]) == 0
    assert resumed == json.loads(capsys.readouterr().out) and resumed["complete"]


def test_train_stops_clearly_on_a_full_disk_and_resumes(small_disk, games, tmp_path, capsys):
    shards = tmp_path / "shards"
    assert main(["extract", "--games-path", str(games), "--size", "9", "--shard-games", "4", "--no-progress",
                 "--out", str(shards)]) == 0
    capsys.readouterr()
    out = small_disk / "gammas.npz"
    argv = ["train", "--shards", str(shards), "--method", "lmp", "--out", str(out), "--batch", "8", "--quiet"]
    assert main(argv) == 1
    assert "No space left on device" in capsys.readouterr().err
    assert leftovers(small_disk) == [] and not out.exists()
    grow(small_disk)
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["finished"] and out.exists()
