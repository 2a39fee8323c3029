"""Gibbs move model (eq. 5 of the paper) with the CRF's expected score: fit beta on positions from the
training split, report the mean log-likelihood of the professional (KGS 6d+) moves on the test split,
against the uniform distribution over legal moves.
Usage: python studies/crf/crf_move_model.py --model b5 --games 10 --moves 30,60,90,120,150 [--json OUT]"""
import argparse
import json
import os
import tarfile
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import numpy as np

from jaxgo.crf.evaluator import load_model
from jaxgo.crf.moves import fit_beta, log_likelihood, move_values
from jaxgo.data.split import kgs_archives
from jaxgo.go.config import Rules
from jaxgo.go.sgf import load_sgf, replay
from jaxgo.util.paths import data_dir

DATA = data_dir() / "games" / "kgs-highdan"


def positions(split, games, moves):
    """Yield (state, actual move point) from the first `games` even 19x19 games of the split ('train', 'test')."""
    done = 0
    for path in kgs_archives(DATA, split):
        with tarfile.open(path) as tf:
            for m in tf:
                if done >= games:
                    return
                if not m.isfile() or not m.name.endswith(".sgf"):
                    continue
                try:
                    rec = load_sgf(tf.extractfile(m).read())
                    if rec.size != 19 or rec.setup_black or rec.setup_white or len(rec.moves) < max(moves) + 1:
                        continue
                    out = []
                    for mv in moves:
                        g = replay(rec, Rules(size=19, komi=rec.komi, ko_rule="simple"), mv)
                        colour, point = rec.moves[mv - 1]
                        if point is None or point >= 361 or colour != g.to_play:
                            continue
                        out.append((g.state, point))
                except Exception:
                    continue
                done += 1
                yield from out


def collect(split, games, moves, name, params):
    ex = []
    for state, point in positions(split, games, moves):
        legal, u = move_values(state, params, name)
        idx = np.nonzero(legal == point)[0]
        if len(idx):
            ex.append((u, int(idx[0])))
    return ex


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="b5")
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--moves", default="30,60,90,120,150")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    moves = tuple(int(x) for x in a.moves.split(","))
    name, params = load_model(a.model)
    t = time.time()
    train = collect("train", a.games, moves, name, params)
    beta = fit_beta(train)
    test = collect("test", a.games, moves, name, params)
    res = {"model": a.model, "beta": beta, "train_positions": len(train), "test_positions": len(test),
           "test_mean_log_likelihood": float(np.mean([log_likelihood(u, c, beta) for u, c in test])),
           "uniform_mean_log_likelihood": float(np.mean([-np.log(len(u)) for u, _ in test])),
           "test_top1": float(np.mean([int(np.argmax(u) == c) for u, c in test])),
           "test_mean_rank": float(np.mean([1 + int((u > u[c]).sum()) for u, c in test])),
           "mean_legal_moves": float(np.mean([len(u) for u, _ in test])), "seconds": round(time.time() - t, 1)}
    print(json.dumps(res))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
