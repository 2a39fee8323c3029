"""Build GNU Go territory labels from the training split (KGS 2001/2002/2003/2006/2015; default) or the
test split (KGS 2017-01..06, `--split test`) of ../shared/data/games/kgs-highdan.  Keeps games with a counted score (RE[B+x]/RE[W+x], x numeric)
and >= 160 moves; stores positions at moves 20, 80, 150 and the labels.
Usage: python scripts/crf_labels.py [--split train|test] [--offset K] --games 40 --out /tmp/crf_labels.npz"""
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
TEST_YEARS = ("2017",)
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


def save(out, labels, komis, names, pos):
    tmp = out + ".tmp.npz"
    np.savez(tmp, labels=np.array(labels, np.int8), komi=np.array(komis, np.float32),
             names=np.array(names), **{f"moves{m}": np.array(pos[m], np.int8) for m in MOVES})
    os.replace(tmp, out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="../shared/data/games/kgs-highdan")
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--out", default="/tmp/crf_labels.npz")
    ap.add_argument("--split", choices=("train", "test"), default="train")
    ap.add_argument("--offset", type=int, default=0, help="skip the first N eligible games (parallel runs)")
    a = ap.parse_args()
    years = TRAIN_YEARS if a.split == "train" else TEST_YEARS
    files = sorted(f for f in os.listdir(a.data) if f.endswith(".tar.gz") and f.split("-")[1][:4] in years)
    pos = {m: [] for m in MOVES}
    labels, komis, names, broken, skipped = [], [], [], 0, 0
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
                if skipped < a.offset:
                    skipped += 1
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
                komis.append(rec.komi)
                names.append(m.name)
                bar.update(1)
                if len(labels) % 25 == 0:                  # partial results survive a kill
                    save(a.out, labels, komis, names, pos)
        if len(labels) >= a.games:
            break
    save(a.out, labels, komis, names, pos)
    print(f"{len(labels)} games labelled, {broken} skipped as broken -> {a.out}")


if __name__ == "__main__":
    main()
