"""Labelled sets for the territory CRFs: positions of finished games and GNU Go's final area as labels
(``jaxgo territory label``).

By default the games are the training split (KGS 2001/2002/2003/2006/2015) or the test split (KGS 2017-01..06,
``--split test``) of DATA/games/kgs-highdan (DATA: ``jaxgo.util.paths.data_dir()``; the split is
``jaxgo.data.split.kgs_split``).  Keeps games with a counted score (RE[B+x]/RE[W+x], x numeric) and >= 160
moves; stores the positions before moves 20, 80 and 150 and the labels:

    jaxgo territory label [--split train|test] [--offset K] --games 40 --out /tmp/crf_labels.npz

With ``--sgf-dir DIR [DIR ...]`` the games are the *.sgf files of those folders (any board size, e.g. 9x9 GNU Go
self-play from studies/crf/crf_9x9_games.py, whose match command ``match_command`` builds):

    jaxgo territory label --sgf-dir /tmp/crf9/games --moves 10,25,40 --min-moves 40 --out SET9.npz
"""

from __future__ import annotations

import argparse
import os
import sys
import tarfile

import numpy as np
from tqdm import tqdm

from jaxgo.crf.labels import territory_labels
from jaxgo.data.split import kgs_archives
from jaxgo.go.config import Rules
from jaxgo.go.sgf import load_sgf, replay
from jaxgo.util.files import save_npz_atomic
from jaxgo.util.paths import data_dir

MOVES = (20, 80, 150)


def counted(b: bytes) -> bool:
    """Whether an SGF's result is a counted score (``RE[B+x]`` / ``RE[W+x]`` with x a number)."""
    i = b.find(b"RE[")
    if i < 0:
        return False
    r = b[i + 3:b.find(b"]", i)].decode("latin1")
    try:
        float(r[2:])
        return r[:2] in ("B+", "W+")
    except ValueError:
        return False


def save(out, labels, komis, names, pos):
    """Write the set: ``labels`` int8 [G, P], ``komi`` [G], ``names`` [G], ``moves{m}`` int8 [G, P] per move."""
    save_npz_atomic(out, dict(labels=np.array(labels, np.int8), komi=np.array(komis, np.float32),
                              names=np.array(names), **{f"moves{m}": np.array(pos[m], np.int8) for m in pos}))


def label_record(b: bytes, moves=MOVES, min_moves=160, size=19):
    """-> (komi, {move: board int8 [P]}, labels int8 [P]) for a counted-score game, or None when the game is
    not eligible (other size, fewer than min_moves moves, setup stones); raises on broken records."""
    rec = load_sgf(b)
    if rec.size != size or len(rec.moves) < min_moves or rec.setup_black or rec.setup_white:
        return None
    rules = Rules(size=size, komi=rec.komi, ko_rule="simple")
    boards = {mv: np.asarray(replay(rec, rules, mv).board()).reshape(-1) for mv in moves}
    _, _, lab = territory_labels(b)
    return rec.komi, boards, lab


def sgf_dir_records(path):
    """Yields (name, bytes) of the *.sgf files of a folder, sorted by name."""
    for f in sorted(os.listdir(path)):
        if f.endswith(".sgf"):
            with open(os.path.join(path, f), "rb") as fh:
                yield f, fh.read()


def archive_records(data, split):
    """Yields (name, bytes) of the SGF members of the KGS .tar.gz archives of the split ('train' or 'test')."""
    for path in kgs_archives(data, split):
        with tarfile.open(path) as tf:
            for m in tf:
                if m.isfile() and m.name.endswith(".sgf"):
                    yield m.name, tf.extractfile(m).read()


def match_command(gnugo: str, games: int, sgf_dir: str, level_a: int, level_b: int, parallel: int,
                  komi: float = 7.5) -> list[str]:
    """argv of the ``jaxgo.match`` run of 9x9 GNU Go self-play for a 9x9 set (``{seed}`` = the game number)."""
    engine = f"{gnugo} --mode gtp --chinese-rules --level {{level}} --seed {{{{seed}}}}"
    return [sys.executable, "-m", "jaxgo.match",
            "--black", engine.format(level=level_a), "--white", engine.format(level=level_b),
            "--size", "9", "--komi", str(komi), "--games", str(games), "--alternate",
            "--sgf-dir", sgf_dir, "--parallel", str(parallel)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="jaxgo territory label", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(data_dir() / "games" / "kgs-highdan"))
    ap.add_argument("--sgf-dir", nargs="+", default=None,
                    help="label the *.sgf files of these folders instead of --data")
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--out", default="/tmp/crf_labels.npz")
    ap.add_argument("--split", choices=("train", "test"), default="train")
    ap.add_argument("--offset", type=int, default=0, help="skip the first N eligible games (parallel runs)")
    ap.add_argument("--moves", default=",".join(map(str, MOVES)), help="move numbers of the stored positions")
    ap.add_argument("--min-moves", type=int, default=160, help="skip games with fewer moves")
    ap.add_argument("--size", type=int, default=None, help="board size (default 19; with --sgf-dir 9)")
    a = ap.parse_args(argv)
    moves = tuple(int(x) for x in a.moves.split(","))
    size = a.size or (9 if a.sgf_dir else 19)
    if a.sgf_dir:
        records = ((os.path.join(os.path.basename(os.path.normpath(d)), f), b)
                   for d in a.sgf_dir for f, b in sgf_dir_records(d))
    else:
        records = archive_records(a.data, a.split)
    pos = {m: [] for m in moves}
    labels, komis, names, broken, skipped = [], [], [], 0, 0
    seen, duplicates = set(), 0          # self-play folders can hold the same game twice: keep the first
    bar = tqdm(total=a.games)
    for name, b in records:
        if len(labels) >= a.games:
            break
        if not counted(b):
            continue
        if skipped < a.offset:
            skipped += 1
            continue
        try:
            if a.sgf_dir:
                key = tuple(load_sgf(b).moves)
                if key in seen:
                    duplicates += 1
                    continue
                seen.add(key)
            got = label_record(b, moves, a.min_moves, size)
        except Exception:
            broken += 1
            continue
        if got is None:
            continue
        komi, boards, lab = got
        for mv in moves:
            pos[mv].append(boards[mv])
        labels.append(lab)
        komis.append(komi)
        names.append(name)
        bar.update(1)
        if len(labels) % 25 == 0:                  # partial results survive a kill
            save(a.out, labels, komis, names, pos)
    bar.close()
    save(a.out, labels, komis, names, pos)
    dup = f", {duplicates} duplicate games skipped" if a.sgf_dir else ""
    print(f"{len(labels)} games labelled, {broken} skipped as broken{dup} -> {a.out}")
    return 0
