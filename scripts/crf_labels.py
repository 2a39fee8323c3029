"""Build GNU Go territory labels from the TRAINING split (KGS 2001/2002/2003/2006/2015) of
../shared/data/games/kgs-highdan.  Keeps games with a counted score (RE[B+x]/RE[W+x], x numeric)
and >= 160 moves; stores positions at moves 20, 80, 150 and the labels.
Usage: python scripts/crf_labels.py --games 40 --out /tmp/crf_labels.npz"""
import argparse
import os
import tarfile

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import numpy as np
from tqdm import tqdm

from jaxgo.config import Rules
from jaxgo.crf.labels import territory_labels
from jaxgo.sgf import load_sgf, replay

TRAIN_YEARS = ("2001", "2002", "2003", "2006", "2015")
MOVES = (20, 80, 150)


def counted(b: bytes) -> bool:
    i = b.find(b"RE[")
    if i < 0:
        return False
    r = b[i + 3:b.find(b"]", i)].decode("latin1")
    try:
        float(r[2:])
        return r[:2] in ("B+", "W+")
    except ValueError:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="../shared/data/games/kgs-highdan")
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--out", default="/tmp/crf_labels.npz")
    a = ap.parse_args()
    files = sorted(f for f in os.listdir(a.data) if f.split("-")[1] in TRAIN_YEARS)
    pos = {m: [] for m in MOVES}
    labels, broken = [], 0
    bar = tqdm(total=a.games)
    for f in files:
        with tarfile.open(os.path.join(a.data, f)) as tf:
            for m in tf:
                if len(labels) >= a.games:
                    break
                if not m.isfile() or not m.name.endswith(".sgf"):
                    continue
                b = tf.extractfile(m).read()
                if not counted(b):
                    continue
                try:
                    rec = load_sgf(b)
                    if rec.size != 19 or len(rec.moves) < 160 or rec.setup_black or rec.setup_white:
                        continue
                    rules = Rules(size=19, komi=rec.komi, ko_rule="simple")
                    boards = [np.asarray(replay(rec, rules, mv).board()).reshape(-1) for mv in MOVES]
                    _, _, lab = territory_labels(b)
                except Exception:
                    broken += 1
                    continue
                for mv, bd in zip(MOVES, boards):
                    pos[mv].append(bd)
                labels.append(lab)
                bar.update(1)
        if len(labels) >= a.games:
            break
    np.savez(a.out, labels=np.array(labels, np.int8), **{f"moves{m}": np.array(pos[m], np.int8) for m in MOVES})
    print(f"{len(labels)} games labelled, {broken} skipped as broken -> {a.out}")


if __name__ == "__main__":
    main()
