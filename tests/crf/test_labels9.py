"""9x9 territory label sets from a folder of SGFs (``jaxgo territory label --sgf-dir``, jaxgo/crf/label_sets.py),
as built from GNU Go self-play by studies/crf/crf_9x9_games.py."""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np
import pytest

from jaxgo.crf import label_sets
from jaxgo.crf.labels import gnugo_path

# A finished 9x9 game: Black builds column D, White column E, White invades at B2 (sgf bh), two passes.
#   at the end:      A B C D E F G H J
#                 9  . . . X O . . . .
#                 8  . . . X O . . . .
#                 7  . . X X O . . . .
#                 ...
#                 2  . O . X O . . . .
#                 1  . . . X O . . . .
MOVES = [("B", f"d{c}") if i % 2 == 0 else ("W", f"e{c}") for c in "abcdefghi" for i in range(2)]
MOVES += [("B", "cc"), ("W", "bh"), ("B", ""), ("W", "")]
GAME = ("(;GM[1]FF[4]SZ[9]KM[7.5]RE[B+11.5]" + "".join(f";{c}[{v}]" for c, v in MOVES) + ")").encode()


def test_game_fixture_is_ascii_board():
    from jaxgo.go.config import Rules
    from jaxgo.go.sgf import load_sgf, replay
    rec = load_sgf(GAME)
    assert rec.size == 9 and len(rec.moves) == 22
    b = np.asarray(replay(rec, Rules(size=9, komi=7.5, ko_rule="simple"), 20).board()).reshape(9, 9)
    assert np.all(b[:, 3] == 1) and np.all(b[:, 4] == -1)
    assert b[2, 2] == 1 and b[7, 1] == 0                   # before move 20: B C7 (move 19) played, W B2 not yet
    assert label_sets.counted(GAME)


def test_match_command_is_gnugo_self_play():
    cmd = label_sets.match_command("/usr/games/gnugo", 80, "/tmp/x", 1, 2, 2)
    assert cmd[1:3] == ["-m", "jaxgo.match"]
    assert cmd[cmd.index("--size") + 1] == "9" and "--alternate" in cmd
    assert "--level 1 --seed {seed}" in cmd[cmd.index("--black") + 1]
    assert "--level 2 --seed {seed}" in cmd[cmd.index("--white") + 1]


@pytest.mark.gnugo
@pytest.mark.skipif(gnugo_path() is None, reason="GNU Go not installed (apt-get install -y gnugo)")
def test_label_sgf_dir_9x9(tmp_path):
    games = tmp_path / "games"
    games.mkdir()
    (games / "a.sgf").write_bytes(GAME)
    (games / "a_copy.sgf").write_bytes(GAME.replace(b"KM[7.5]", b"KM[7.5]PB[x]"))        # same game: skipped
    (games / "b_unfinished.sgf").write_bytes(GAME.replace(b"RE[B+11.5]", b"RE[B+R]"))   # not counted: ignored
    (games / "c_short.sgf").write_bytes(GAME.replace(b";B[cc];W[bh];B[];W[]", b""))       # 18 moves: too short
    (games / "d_broken.sgf").write_bytes(b"(;GM[1]SZ[9]RE[W+3.5];B[zz")                   # broken: counted
    out = tmp_path / "set9.npz"
    from jaxgo import cli

    assert cli.main(["territory", "label", "--sgf-dir", str(games), "--moves", "10,20", "--min-moves", "20",
                     "--games", "10", "--out", str(out)]) == 0
    d = np.load(out)
    assert list(d["names"]) == ["games/a.sgf"]
    assert d["labels"].shape == (1, 81) and d["moves10"].shape == (1, 81) and d["moves20"].shape == (1, 81)
    assert d["komi"][0] == pytest.approx(7.5)
    # "position at move N" = before move N (moves 1..N-1 played), as in the 19x19 sets
    assert np.count_nonzero(d["moves10"][0]) == 9 and np.count_nonzero(d["moves20"][0]) == 19
    lab = d["labels"][0].reshape(9, 9)
    assert np.all(lab[:, :4] == 1) and np.all(lab[:, 4:] == -1)      # dead W B2 removed; area by colour

    from jaxgo.crf.cli import load_labelled  # the eval loader reads it
    dd = load_labelled([str(out)], (10, 20))
    assert dd["stones"].shape == (2, 81) and list(dd["move"]) == [10, 20]
