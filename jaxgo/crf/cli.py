"""`jaxgo territory` — train, evaluate and draw the territory CRFs (Stern, Graepel, MacKay 2004).

  jaxgo territory label --games 40 --out NPZ [--split train|test] [--sgf-dir DIR ...]
  jaxgo territory train --labels NPZ [NPZ ...] --model b5|blib --inference bp|sw --out MODEL.json
  jaxgo territory eval --model MODEL.json|b5|blib --positions NPZ [--inference bp|sw|exact] [--json]
  jaxgo territory show GAME.sgf [--move N] --out PNG

Labelled sets (NPZ) come from `jaxgo territory label` (jaxgo/crf/label_sets.py): `labels` [G, P] GNU Go area
outcomes (+1/-1/0 neutral), `moves20`/`moves80`/`moves150` [G, P] positions, `komi` [G].  Training resumes from its
checkpoint (`--checkpoint`, default MODEL.json.ckpt.npz) when one exists.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from jaxgo.util.args import at_least
from jaxgo.util.files import save_npz_atomic


def load_labelled(paths, moves):
    """-> dict stones [M, P], labels [M, P], move [M], komi [M], game [M] (positions at the given moves)."""
    stones, labels, mv, komi, game = [], [], [], [], []
    offset = 0
    for path in paths:
        d = np.load(path)
        lab = d["labels"]
        k = d["komi"] if "komi" in d.files else np.full(len(lab), 7.5, np.float32)
        for m in moves:
            key = f"moves{m}"
            if key not in d.files:
                raise ValueError(f"{path} has no positions at move {m}")
            stones.append(d[key])
            labels.append(lab)
            mv.append(np.full(len(lab), m))
            komi.append(k)
            game.append(offset + np.arange(len(lab)))
        offset += len(lab)
    if not stones:
        raise ValueError("no positions")
    cat = np.concatenate
    return dict(stones=cat(stones).astype(np.int32), labels=cat(labels).astype(np.int8), move=cat(mv),
                komi=cat(komi).astype(np.float32), game=cat(game))


def _moves(text):
    return tuple(int(x) for x in text.split(","))


def _initial(model, init):
    from jaxgo.crf.evaluator import load_model
    from jaxgo.crf.models import B5_PAPER, MODELS, blib_from_b5
    if init == "zeros":
        return np.zeros(MODELS[model].num_params, np.float32)
    if init == "paper":
        name, p = "b5", B5_PAPER
    else:
        name, p = load_model(init)
    if name == model:
        return np.asarray(p, np.float32)
    if name == "b5" and model == "blib":
        return blib_from_b5(p)
    raise ValueError(f"cannot initialise {model} from a {name} model")


class TrainError(Exception):
    """A one-line reason `jaxgo territory train` stops (exit status 1; nothing is overwritten)."""


def _positive_float(text: str) -> float:
    value = float(text)
    if not (np.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value



def train_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="jaxgo territory train", description="ML training of a territory CRF",
        epilog="The checkpoint (--checkpoint, default OUT.ckpt.npz) is resumed only by the same run: the same "
               "model, inference, labelled positions (--labels, --moves, --limit), seed, batch, learning rate "
               "and sampler settings, and --steps at least its saved step; it continues the run's random stream, "
               "so a killed and resumed run ends with the parameters of an uninterrupted one.  A checkpoint that "
               "is unreadable, of another run, of other shapes or not finite is refused with one line (exit 1) "
               "and left as it is.")
    ap.add_argument("--labels", nargs="+", required=True, help="labelled sets from `jaxgo territory label`")
    ap.add_argument("--model", choices=("b5", "blib"), default="b5")
    ap.add_argument("--inference", choices=("bp", "sw"), default="bp",
                    help="model expectations by loopy BP or persistent Swendsen-Wang chains")
    ap.add_argument("--moves", type=_moves, default=(20, 80, 150))
    ap.add_argument("--steps", type=at_least(1), default=300, help="optimiser steps, at least 1 (default 300)")
    ap.add_argument("--batch", type=at_least(1), default=32, help="positions per step, at least 1 (default 32)")
    ap.add_argument("--lr", type=_positive_float, default=0.05, help="Adam learning rate, finite and > 0")
    ap.add_argument("--sweeps", type=at_least(1), default=5, help="SW sweeps per step and chain (at least 1)")
    ap.add_argument("--chains", choices=("persistent", "fresh"), default="persistent",
                    help="SW chains: persistent (start at the data, PCD) or fresh each step (stones at their "
                         "colour, empty points random, --burn-in sweeps first) like the evaluation sampler")
    ap.add_argument("--burn-in", type=at_least(0), default=10, help="burn-in sweeps of fresh chains")
    ap.add_argument("--init", default="paper", help="zeros | paper (B5 values) | MODEL.json (b5 -> blib allowed)")
    ap.add_argument("--limit", type=at_least(0), default=0, help="use only the first N positions")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--checkpoint-every", type=at_least(1), default=25, help="steps between checkpoints (>= 1)")
    return ap


def run_identity(a, d) -> dict:
    """What a checkpoint must match to be resumed: the settings that shape the run and a digest of its data."""
    import hashlib

    digest = hashlib.sha256()
    for key in ("stones", "labels", "komi"):
        digest.update(np.ascontiguousarray(d[key]).tobytes())
    return {"model": a.model, "inference": a.inference, "moves": list(a.moves), "limit": a.limit, "seed": a.seed,
            "batch": a.batch, "lr": a.lr, "sweeps": a.sweeps, "chains": a.chains, "burn_in": a.burn_in,
            "data": digest.hexdigest()[:16]}


def _writable_folder(path: str, what: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise TrainError(f"the folder of {what} {path} does not exist")
    if not os.access(folder, os.W_OK):
        raise TrainError(f"cannot write {what} {path}: the folder is read-only")
    if os.path.isdir(path):
        raise TrainError(f"{what} {path} is a folder")


def read_checkpoint(path: str, identity: dict, steps: int, params, leaves, chains) -> dict:
    """The checkpoint at ``path`` checked against this run (TrainError naming what is wrong): readable, of
    this run (``identity``), at a step in [0, steps], and of the shapes of ``params`` [K], the optimiser's
    ``leaves`` and ``chains`` [M, P], all finite.  -> dict params, step, chains, opt (list), rng (state)."""
    import zipfile

    if os.path.isdir(path):
        raise TrainError(f"checkpoint {path} is a folder")
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as exc:
        raise TrainError(f"cannot read checkpoint {path}: {exc or type(exc).__name__} (remove it to start "
                         "afresh)") from None
    missing = [k for k in ("run", "rng", "params", "step", "chains") if k not in data]
    if missing:
        raise TrainError(f"checkpoint {path} lacks {', '.join(missing)} (another program's file, or written by "
                         "an older jaxgo: remove it to start afresh)")
    try:
        saved = json.loads(str(data["run"]))
        rng_state = json.loads(str(data["rng"]))
    except ValueError:
        raise TrainError(f"checkpoint {path} has an unreadable run identity") from None
    differ = [k for k in identity if saved.get(k) != identity[k]]
    if differ:
        shown = ", ".join(f"{k} {saved.get(k)!r} (now {identity[k]!r})" for k in differ)
        raise TrainError(f"checkpoint {path} is of another run: {shown}; remove it or use another --checkpoint")
    step = int(data["step"]) if data["step"].shape == () and data["step"].dtype.kind in "iu" else -1
    if not 0 <= step <= steps:
        raise TrainError(f"checkpoint {path} is at step {data['step']}, --steps {steps} is below it" if step > steps
                         else f"checkpoint {path} has a bad step {data['step']!r}")
    opt = [data.get(f"opt{i}") for i in range(len(leaves))]
    expected = [("params", data["params"], np.shape(params)), ("chains", data["chains"], np.shape(chains))]
    expected += [(f"opt{i}", x, np.shape(leaf)) for i, (x, leaf) in enumerate(zip(opt, leaves))]
    for name, value, shape in expected:
        if value is None or value.shape != shape or value.dtype.kind not in "fiu":
            raise TrainError(f"checkpoint {path}: {name} should be numbers of shape {shape}")
        if not np.all(np.isfinite(value)):
            raise TrainError(f"checkpoint {path}: {name} is not finite (NaN or infinity)")
    return {"params": data["params"], "step": step, "chains": data["chains"].astype(np.float32), "opt": opt,
            "rng": rng_state}


def train(argv) -> int:
    a = train_parser().parse_args(argv)
    try:
        return _train(a)
    except TrainError as exc:
        print(f"jaxgo territory train: {exc}", file=sys.stderr)
        return 1


def _load_labels(a) -> dict:
    import zipfile

    for path in a.labels:
        if not os.path.isfile(path):
            raise TrainError(f"labels {path}: {'a folder' if os.path.isdir(path) else 'no such file'}")
    try:
        return load_labelled(a.labels, a.moves)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise TrainError(f"cannot read labels: {exc}") from None


def _train(a) -> int:
    import jax
    import jax.numpy as jnp
    import optax

    from jaxgo.crf.evaluator import save_model
    from jaxgo.crf.train import bp_surrogate, sampled_surrogate

    ckpt = a.checkpoint or a.out + ".ckpt.npz"
    _writable_folder(a.out, "--out")
    _writable_folder(ckpt, "checkpoint")
    d = _load_labels(a)
    if a.limit:
        d = {k: v[:a.limit] for k, v in d.items()}
    M, P = d["stones"].shape
    n = int(round(P ** 0.5))
    rng = np.random.default_rng(a.seed)
    # neutral points get a random owner (fixed by the seed); they are left out of evaluation
    spins = np.where(d["labels"] > 0, 0, np.where(d["labels"] < 0, 1, rng.integers(0, 2, d["labels"].shape)))
    spins = spins.astype(np.int32)
    opt = optax.adam(optax.cosine_decay_schedule(a.lr, max(a.steps, 1), alpha=0.1))
    try:
        params = jnp.asarray(_initial(a.model, a.init))
    except (OSError, ValueError, KeyError) as exc:
        raise TrainError(f"--init {a.init}: {exc}") from None
    state = opt.init(params)
    chains = 1.0 - 2.0 * spins.astype(np.float32)              # persistent chains start at the data
    step0 = 0
    identity = run_identity(a, d)
    if os.path.lexists(ckpt):
        leaves, tree = jax.tree_util.tree_flatten(state)
        saved = read_checkpoint(ckpt, identity, a.steps, params, leaves, chains)
        state = jax.tree_util.tree_unflatten(tree, [jnp.asarray(x, leaf.dtype) for x, leaf in zip(saved["opt"],
                                                                                                 leaves)])
        params, step0, chains = jnp.asarray(saved["params"], jnp.float32), saved["step"], saved["chains"]
        rng.bit_generator.state = saved["rng"]  # the batch stream continues where it stopped
        print(f"resumed from {ckpt} at step {step0}")
    if a.inference == "bp":
        grad = jax.jit(lambda p, c, s: jax.grad(lambda q: -bp_surrogate(q, c, s, n, model=a.model))(p))
    else:
        burn = a.burn_in if a.chains == "fresh" else 0
        grad = jax.jit(lambda p, c, s, k, ch: jax.grad(
            lambda q: sampled_surrogate(q, c, s, n, k, ch, a.sweeps, a.model, burn), has_aux=True)(p))
    t0 = time.time()
    print(f"training {a.model} with {a.inference} on {M} positions (moves {a.moves}), {a.steps} steps, "
          f"batch {a.batch}")
    for step in range(step0, a.steps):
        idx = rng.choice(M, size=min(a.batch, M), replace=False)
        c, s = jnp.asarray(d["stones"][idx]), jnp.asarray(spins[idx])
        if a.inference == "bp":
            g = grad(params, c, s)
        else:
            start = chains[idx]
            if a.chains == "fresh":
                st = d["stones"][idx]
                start = np.where(st != 0, st, rng.choice([-1.0, 1.0], size=st.shape)).astype(np.float32)
            g, new = grad(params, c, s, jax.random.PRNGKey(a.seed * 1000003 + step), jnp.asarray(start))
            g = -g
            chains[idx] = np.asarray(new)
        upd, state = opt.update(g, state)
        params = optax.apply_updates(params, upd)
        if not bool(jnp.all(jnp.isfinite(params))):
            raise TrainError(f"the parameters became NaN or infinite at step {step + 1} (try a smaller --lr); "
                             "nothing written for this step")
        if (step + 1) % a.checkpoint_every == 0 or step + 1 == a.steps:
            leaves = jax.tree_util.tree_leaves(state)
            arrays = dict(params=np.asarray(params), step=step + 1, chains=chains,
                          run=np.array(json.dumps(identity)), rng=np.array(json.dumps(rng.bit_generator.state)),
                          **{f"opt{i}": np.asarray(x) for i, x in enumerate(leaves)})
            try:
                save_npz_atomic(ckpt, arrays)
            except OSError as exc:
                raise TrainError(f"cannot write checkpoint {ckpt}: {exc.strerror or exc}") from None
            head = " ".join(f"{x:.3f}" for x in np.asarray(params)[:5])
            print(f"step {step + 1}/{a.steps} |grad| {float(jnp.linalg.norm(g)):.4f} params[:5] {head} "
                  f"({time.time() - t0:.0f}s)", flush=True)
    try:
        save_model(a.out, a.model, params, inference=a.inference, positions=int(M), moves=list(a.moves),
                   steps=a.steps, labels=[os.path.basename(p) for p in a.labels])
    except OSError as exc:
        raise TrainError(f"cannot write {a.out}: {exc.strerror or exc}") from None
    print(f"wrote {a.out}")
    return 0


def evaluate(model_path, positions, moves, inference, sweeps=200, burn_in=20, seed=0, limit=0):
    """-> list of per-move result dicts (Figure 4 metric and sign accuracy; with sw also score/win stats)."""
    from jaxgo.crf.evaluator import load_model
    from jaxgo.crf.predict import (
        cross_entropy,
        expected_score,
        marginals,
        score_samples,
        sign_accuracy,
        win_probability,
    )
    name, params = load_model(model_path)
    d = load_labelled([positions], moves)
    rows = []
    for m in moves:
        sel = np.nonzero(d["move"] == m)[0]
        if limit:
            sel = sel[:limit]
        st, lab = d["stones"][sel], d["labels"][sel]
        n = int(round(st.shape[1] ** 0.5))
        t = time.time()
        p = marginals(params, name, st, n, inference, sweeps=sweeps, burn_in=burn_in, seed=seed)
        dt = time.time() - t
        x = cross_entropy(p, lab)
        acc = sign_accuracy(p, lab)
        row = {"model": name, "inference": inference, "move": int(m), "positions": int(len(sel)),
               "cross_entropy_nats": float(x.mean()), "cross_entropy_bits": float(x.mean() / np.log(2)),
               "cross_entropy_std": float(x.std()), "sign_accuracy": float(acc.mean()), "seconds": round(dt, 2)}
        if inference == "sw":
            smp = score_samples(params, name, st, n, sweeps=sweeps, burn_in=burn_in, seed=seed + 7)
            komi = d["komi"][sel]
            final = lab.astype(np.float64).sum(-1)               # GNU Go area score, Black minus White
            black_won = final > komi
            pw = np.clip(win_probability(smp, komi), 1e-3, 1 - 1e-3)
            row.update(score_mae=float(np.abs(expected_score(smp) - final).mean()),
                       winner_accuracy=float(((pw > 0.5) == black_won).mean()),
                       winner_log_loss=float(-np.where(black_won, np.log(pw), np.log(1 - pw)).mean()))
        rows.append(row)
    return rows


def eval_main(argv) -> int:
    ap = argparse.ArgumentParser(prog="jaxgo territory eval",
                                 description="per-point cross-entropy (Figure 4) and sign accuracy on a labelled set")
    ap.add_argument("--model", default="b5", help="MODEL.json or a shipped default (b5, blib)")
    ap.add_argument("--positions", required=True, help="labelled set from `jaxgo territory label`")
    ap.add_argument("--inference", choices=("bp", "sw", "gibbs", "exact"), default="bp")
    ap.add_argument("--moves", type=_moves, default=(20, 80, 150))
    ap.add_argument("--sweeps", type=at_least(1), default=200, help="sampler sweeps (sw, gibbs), at least 1")
    ap.add_argument("--burn-in", type=at_least(0), default=20)
    ap.add_argument("--limit", type=at_least(0), default=0, help="at most N positions per move number")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    try:
        rows = evaluate(a.model, a.positions, a.moves, a.inference, a.sweeps, a.burn_in, a.seed, a.limit)
    except (OSError, ValueError, KeyError) as e:
        if a.json:
            print(json.dumps({"error": str(e)}))
        else:
            print(f"jaxgo territory eval: {e}", file=sys.stderr)
        return 1
    if a.json:
        print(json.dumps(rows))
        return 0
    print(f"{'model':5s} {'inf':5s} {'move':>4s} {'pos':>5s} {'xent(nats)':>10s} {'xent(bits)':>10s} "
          f"{'sign acc':>8s}")
    for r in rows:
        extra = (f"  score MAE {r['score_mae']:.1f}, winner acc {r['winner_accuracy']:.3f}"
                 if "score_mae" in r else "")
        print(f"{r['model']:5s} {r['inference']:5s} {r['move']:4d} {r['positions']:5d} "
              f"{r['cross_entropy_nats']:10.3f} {r['cross_entropy_bits']:10.3f} {r['sign_accuracy']:8.3f}{extra}")
    return 0


def show(argv) -> int:
    ap = argparse.ArgumentParser(prog="jaxgo territory show", description="territory heatmaps of an SGF position")
    ap.add_argument("sgf")
    ap.add_argument("--move", type=int, default=None, help="position after N moves (default: the whole game)")
    ap.add_argument("--models", default="b5,blib")
    ap.add_argument("--sweeps", type=int, default=400)
    ap.add_argument("--playouts", type=int, default=0, help="add a playout-ownership panel with N playouts")
    ap.add_argument("--truth", action="store_true", help="add the game's final outcome (GNU Go dead stones)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    from jaxgo.crf.plot import show_sgf
    try:
        with open(a.sgf, "rb") as f:
            data = f.read()
        show_sgf(data, a.move, a.models.split(","), a.sweeps, a.playouts, a.out, a.truth)
    except (OSError, ValueError, RuntimeError) as e:
        print(f"jaxgo territory show: {e}", file=sys.stderr)
        return 1
    print(f"wrote {a.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from jaxgo.crf import label_sets

    cmds = {"label": label_sets.main, "train": train, "eval": eval_main, "show": show}
    if not argv or argv[0] not in cmds:
        print(__doc__.strip())
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    return cmds[argv[0]](argv[1:])
