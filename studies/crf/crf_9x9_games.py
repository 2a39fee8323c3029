"""9x9 games for the territory CRF's 9x9 sets (issue 5): GNU Go self-play through `python -m jaxgo.match`.

Engine A = GNU Go at --level-a, engine B = GNU Go at --level-b, colours alternate every game, GNU Go's --seed is
the game number (so games differ), Chinese rules, komi 7.5, played to two passes; the referee settles dead stones
with both engines' final_status_list.  One SGF per game in --sgf-dir; the exact match command and its JSON
summary go to SGF_DIR/match_command.txt and SGF_DIR/match_summary.json.

Usage: python studies/crf/crf_9x9_games.py --games 100 --sgf-dir /tmp/crf9/games [--level-a 1 --level-b 2]
Then:  jaxgo territory label --sgf-dir /tmp/crf9/games --moves 10,25,40 --min-moves 40 --out SET.npz
       jaxgo territory eval --model b5|blib --positions SET.npz --moves 10,25,40 --inference bp|sw|exact --json
BP and SW error vs exact marginals on the set's positions (mean / max |P_method - P_exact| per move number):
       python studies/crf/crf_9x9_games.py --marginal-errors SET.npz [--moves 10,25,40 --sweeps 200 --models b5,blib]
"""
import argparse
import os
import shlex
import subprocess
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jaxgo.crf.label_sets import match_command
from jaxgo.go.gtp_client import find_gnugo


def marginal_errors(positions: str, moves, models=("b5", "blib"), sweeps: int = 200, burn_in: int = 20,
                    seed: int = 0) -> list[dict]:
    """-> one row per (model, move, method in bp/sw): mean and max |P(Black) - exact P(Black)| over all
    points of the set's positions at that move number (exact = row-frontier elimination)."""
    import numpy as np

    from jaxgo.crf.cli import load_labelled
    from jaxgo.crf.evaluator import load_model
    from jaxgo.crf.predict import marginals
    d = load_labelled([positions], moves)
    rows = []
    for model in models:
        name, params = load_model(model)
        for m in moves:
            st = d["stones"][d["move"] == m]
            n = int(round(st.shape[1] ** 0.5))
            exact = marginals(params, name, st, n, "exact")
            for method in ("bp", "sw"):
                p = marginals(params, name, st, n, method, sweeps=sweeps, burn_in=burn_in, seed=seed)
                err = np.abs(np.asarray(p) - np.asarray(exact))
                rows.append({"model": name, "move": int(m), "method": method, "positions": int(len(st)),
                             "mean_abs_err": float(err.mean()), "max_abs_err": float(err.max()),
                             "mean_per_position_max": float(err.max(-1).mean())})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--sgf-dir", default="/tmp/crf9/games")
    ap.add_argument("--level-a", type=int, default=1)
    ap.add_argument("--level-b", type=int, default=2)
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--komi", type=float, default=7.5)
    ap.add_argument("--marginal-errors", metavar="SET.npz", default=None,
                    help="instead of playing: BP and SW error vs exact marginals on a labelled 9x9 set (JSON)")
    ap.add_argument("--moves", default="10,25,40")
    ap.add_argument("--models", default="b5,blib")
    ap.add_argument("--sweeps", type=int, default=200)
    a = ap.parse_args(argv)
    if a.marginal_errors:
        import json
        rows = marginal_errors(a.marginal_errors, tuple(int(x) for x in a.moves.split(",")),
                               tuple(a.models.split(",")), a.sweeps)
        print(json.dumps(rows))
        return 0
    gnugo = find_gnugo()
    if gnugo is None:
        print("GNU Go not found (apt-get install -y gnugo)", file=sys.stderr)
        return 1
    os.makedirs(a.sgf_dir, exist_ok=True)
    cmd = match_command(gnugo, a.games, a.sgf_dir, a.level_a, a.level_b, a.parallel, a.komi)
    text = shlex.join(cmd)
    with open(os.path.join(a.sgf_dir, "match_command.txt"), "w") as f:
        f.write(text + "\n")
    print(text, flush=True)
    t = time.time()
    out = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(a.sgf_dir, "match_summary.json"), "w") as f:
        f.write(out.stdout)
    if out.returncode != 0:
        print(out.stderr[-2000:], file=sys.stderr)
        return out.returncode
    n = sum(1 for x in os.listdir(a.sgf_dir) if x.endswith(".sgf"))
    print(f"{n} SGFs in {a.sgf_dir} ({time.time() - t:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
