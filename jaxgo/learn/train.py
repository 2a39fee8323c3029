"""Training drivers over extracted shards (``jaxgo.learn.shards``): MM, LMP and Adam, with resumable checkpoints.

``train(shards, method, out)`` writes a gamma file (``jaxgo.features.gammas``).  With ``checkpoint=DIR`` the state
is saved after every shard (LMP, SGD) or every sweep (MM) to ``DIR/state.npz`` (atomically, ``jaxgo.util.files``),
and a new call with the same arguments resumes from it: a killed run loses at most one shard / sweep of work.

- ``mm``: batch MM (``jaxgo.learn.bt``); all shards are held in host memory once (packed codes, 4 bytes per
  candidate; ``MM_CHUNK`` batches at a time go to the device), every group update is one pass over them.  Memory
  grows with the number of games.
- ``lmp``: Laplace_q marginal propagation (``jaxgo.learn.lmp``), streaming one memory-mapped shard at a time.
  Several passes keep each batch's factors in ``DIR/factors-<shard>.npy`` (committed together with the state).
- ``sgd``: Adam (optax) on the log-gammas, minibatches streamed like LMP, the same Gamma prior as LMP/MM.

``devices=n`` splits every batch over n devices (``jaxgo.learn.parallel``); results equal the one-device run up
to float rounding.

Several processes (after ``jaxgo.util.distributed.initialize``, e.g. ``jaxgo gammas train --coordinator ...``):
every process runs the same calls; the mesh spans all their devices, each process reads only its rows of every
batch (``parallel.process_rows``; MM holds only those in memory), ``jax.jit`` all-reduces the sums across
processes, process 0 alone writes the checkpoint and the gamma file, and on resumption process 0 reads the
checkpoint and broadcasts it (``distributed.broadcast_bytes``), so all processes continue from the same state.
"""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxgo.features.codes import decode
from jaxgo.features.gammas import Gammas, layout
from jaxgo.learn import bt, lmp, parallel
from jaxgo.learn import shards as shardlib
from jaxgo.learn.checkpoint import (
    check_arrays,
    check_progress,
    factor_path,
    load_factors,
    replicate,
    resume,
    save_state,
)
from jaxgo.util import distributed
from jaxgo.util.files import save_npy_atomic

METHODS = ("mm", "lmp", "sgd")


def decode_batch(codes, meta, valid):
    """codes uint32 [B, P+1] (or [B, P+1, 2] with large patterns), meta int16 [B, 4], valid bool [B] ->
    (features int32 [B, P+1, G], mask bool [B, P+1], winner int32 [B])."""
    meta = meta.astype(jnp.int32)
    features, legal = decode(codes, meta[:, shardlib.META_PREV], meta[:, shardlib.META_PREV2])
    return features, legal & valid[:, None], meta[:, shardlib.META_MOVE]


# ---------------------------------------------------------------------------------------------- jitted passes

@functools.partial(jax.jit, static_argnames=("keep",))
def lmp_shard(state, codes, meta, valid, old, first, *, keep: bool):
    """LMP batch updates over one shard's batches (codes, meta, valid as from ``shard_batches``); old [nb, B, K]
    earlier factors (keep=True) or None; first bool [] (first pass).  -> (state, new factors or None)."""
    def step(st, xs):
        c, m, v = xs[:3]
        f, mask, w = decode_batch(c, m, v)
        o = xs[3] if keep else jnp.zeros_like(st.alpha)
        st, new = lmp.batch_update(st, f, mask, w, o, first)
        return st, (new if keep else None)

    xs = (codes, meta, valid, old) if keep else (codes, meta, valid)
    return jax.lax.scan(step, state, xs)


def _sgd_loss(free, codes, meta, valid, fixed, prior_weight):
    lg = jnp.where(fixed, 0.0, free)
    f, mask, w = decode_batch(codes, meta, valid)
    ll = jnp.sum(bt.position_log_likelihood(lg, f, mask, w))
    prior = jnp.sum(jnp.where(fixed, 0.0, bt.PRIOR_ALPHA * lg - bt.PRIOR_BETA * jnp.exp(lg)))
    rows = jnp.maximum(jnp.sum(valid), 1)
    return -(ll + prior_weight * prior) / rows


@functools.partial(jax.jit, static_argnames=("optimizer",))
def _sgd_shard(params, opt_state, codes, meta, valid, fixed, prior_weight, *, optimizer):
    import optax

    def step(carry, xs):
        p, o = carry
        loss, grad = jax.value_and_grad(_sgd_loss)(p, *xs, fixed, prior_weight)
        updates, o = optimizer.update(grad, o, p)
        return (optax.apply_updates(p, updates), o), loss

    (params, opt_state), losses = jax.lax.scan(step, (params, opt_state), (codes, meta, valid))
    return params, opt_state, losses


@jax.jit
def _mm_denominator(lg, codes, meta, valid, group):
    """float32 [K]: ``bt.group_denominator`` summed over the batches.  Each batch is summed on its own before it
    joins the total: without the barrier XLA scatters every candidate's term straight into the running total,
    and once that total is large (~3e4 for the most common distance level after 50 batches) float32 drops most
    of each ~1e-3 term (a 1.6% error on 48,000 KGS positions; the per-batch sums are exact to 1e-6)."""
    def step(acc, xs):
        f, mask, _ = decode_batch(*xs)
        return acc + jax.lax.optimization_barrier(bt.group_denominator(lg, f, mask, group)), None
    return jax.lax.scan(step, jnp.zeros_like(lg), (codes, meta, valid))[0]


@jax.jit
def _mm_update(lg, wins, denom, update):
    return bt.mm_step(lg, wins, denom, update, "gamma")


@jax.jit
def _counts(codes, meta, valid, num: jax.Array):
    """(wins [K], occurrences [K]) over all batches (num: a [K] zeros array giving the size)."""
    def step(acc, xs):
        f, mask, w = decode_batch(*xs)
        row = jnp.any(mask, axis=1)
        wins = bt.win_counts(f, w, num.shape[0], row)
        occ = jax.ops.segment_sum(jnp.broadcast_to(mask[..., None], f.shape).reshape(-1).astype(jnp.float32),
                                  f.reshape(-1), num_segments=num.shape[0])
        return (acc[0] + wins, acc[1] + occ), None
    return jax.lax.scan(step, (num, num), (codes, meta, valid))[0]


@jax.jit
def _ll_sum(lg, codes, meta, valid):
    def step(acc, xs):
        f, mask, w = decode_batch(*xs)
        return acc + jnp.sum(bt.position_log_likelihood(lg, f, mask, w)), None
    return jax.lax.scan(step, jnp.float32(0.0), (codes, meta, valid))[0]


# ---------------------------------------------------------------------------------------------- drivers

def shard_batches(shard, batch, mesh):
    """One shard as fixed-size batches (``shards.batches``), placed on ``mesh`` (None: one device); with a
    multi-process mesh this process reads only its rows of each batch."""
    rows = parallel.process_rows(mesh, batch) if parallel.multi_process(mesh) else None
    codes, meta, valid = shardlib.batches(np.asarray(shard.codes), np.asarray(shard.meta), batch, rows)
    return parallel.put_batches(mesh, (codes, meta, valid), axis=1)


def fixed_levels(shards):
    """bool [K]: the absent level of every group of the shards' model (``gammas.layout``)."""
    return layout(shardlib.large_dictionary(shards))[2]


def train(shards, method: str, out=None, *, checkpoint=None, passes: int = 1, iterations: int = 20,
          batch: int = 256, lr: float = 0.05, devices: int | None = None, stop_after: int | None = None,
          log=None) -> dict:
    """Fit gammas on the shard folder ``shards`` and write them to ``out`` (if given).

    passes: LMP / SGD passes over the data; iterations: MM sweeps; batch: positions per batch (divisible by
    ``devices``); stop_after: return after that many shards (LMP/SGD) or sweeps (MM) of *this call*, leaving the
    checkpoint to resume from (simulates a killed run).  Returns a summary dict (also stored in the file's
    meta): method, positions, games, seconds, train_mean_log_likelihood (MM/SGD: last sweep/pass) ...
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r} ({', '.join(METHODS)})")
    if min(passes, iterations, batch) < 1 or not (np.isfinite(lr) and lr > 0):
        raise ValueError(f"passes, iterations and batch must be at least 1 and lr finite and > 0 (got passes "
                         f"{passes}, iterations {iterations}, batch {batch}, lr {lr})")
    log = log or (lambda *a: None)
    manifest = shardlib.read_manifest(shards)
    if manifest is None:
        raise FileNotFoundError(f"no shards in {shards} (run `jaxgo gammas extract` first)")
    names = [s["name"] for s in manifest["shards"]]
    cluster = distributed.current()
    if cluster.num_processes > 1:
        mesh = parallel.make_mesh(devices)
        log = _prefixed(log, cluster.prefix())
    else:
        mesh = parallel.make_mesh(devices) if devices and devices > 1 else None
    ckpt = Path(checkpoint) if checkpoint else None
    if ckpt and cluster.is_writer:
        ckpt.mkdir(parents=True, exist_ok=True)
    settings = {"method": method, "shards": str(Path(shards).resolve()), "names": names, "passes": passes,
                "iterations": iterations, "batch": batch, "lr": lr}
    arrays, info = resume(ckpt, settings, cluster)
    if info is not None:
        log(f"resuming from checkpoint {ckpt}: " + ", ".join(f"{k} {info[k]}" for k in ("pass", "shard", "sweep")
                                                             if k in info))
    t0 = time.time()
    runner = {"mm": _train_mm, "lmp": _train_lmp, "sgd": _train_sgd}[method]
    log_gamma, extra, finished = runner(shards, names, ckpt, arrays, info, settings, mesh, stop_after, log)
    log_gamma = parallel.to_host(log_gamma)
    require_finite(log_gamma, "the end of the run")
    summary = {"method": method, "games": sum(s["games"] for s in manifest["shards"]),
               "positions": sum(s["positions"] for s in manifest["shards"]), "num_shards": len(names),
               "seconds_this_call": round(time.time() - t0, 2), "finished": finished,
               "devices": 1 if mesh is None else int(mesh.devices.size), "processes": cluster.num_processes,
               **{k: v for k, v in settings.items() if k not in ("names",)}, **extra}
    if finished and out is not None and cluster.is_writer:
        Gammas.from_layout(log_gamma, shardlib.large_dictionary(shards), meta=summary).save(out)
    return summary


def require_finite(values, where: str) -> None:
    """ValueError when ``values`` holds a NaN or an infinity (a learning rate too large): the run stops before
    that state is saved, so the checkpoint keeps the last finite one."""
    if not np.all(np.isfinite(np.asarray(values))):
        raise ValueError(f"the gammas became NaN or infinite at {where} (try a smaller --lr); nothing written "
                         "for it")


def _prefixed(log, prefix: str):
    """``log`` with every message prefixed (a multi-process run tells its processes apart)."""
    return lambda msg: log(prefix + msg)


def _train_lmp(shards, names, ckpt, arrays, info, settings, mesh, stop_after, log):
    passes, batch = settings["passes"], settings["batch"]
    keep = passes > 1
    fixed = fixed_levels(shards)
    cluster = distributed.current()
    if ckpt and info is not None:
        check_progress(info, {"pass": passes, "shard": len(names) - 1}, ckpt)
        check_arrays(arrays, {"alpha": fixed.shape, "beta": fixed.shape}, ckpt)
        state = lmp.LMPState(jnp.asarray(arrays["alpha"]), jnp.asarray(arrays["beta"]), jnp.asarray(fixed))
        p, s = info["pass"], info["shard"]
    else:
        state, p, s = lmp.init(len(fixed), fixed), 0, 0
    state = parallel.put_replicated(mesh, state)
    done = 0
    while p < passes:
        while s < len(names):
            if stop_after is not None and done >= stop_after:
                return lmp.log_gamma(state), {}, False
            shard = shardlib.Shard(shards, names[s])
            codes, meta, valid = shard_batches(shard, batch, mesh)
            first = replicate(mesh, np.bool_(p == 0))
            old = None
            if keep:
                if p > 0:
                    old = load_factors(ckpt, names[s], cluster, mesh) if ckpt else _memory_factors[names[s]]
                else:
                    old = replicate(mesh, np.zeros((codes.shape[0], len(fixed)), np.float32))
            state, factors = lmp_shard(state, codes, meta, valid, old, first, keep=keep)
            s += 1
            done += 1
            log(f"lmp pass {p + 1}/{passes} shard {s}/{len(names)}")
            if keep and not ckpt:
                _memory_factors[names[s - 1]] = factors
            nxt = (p + 1, 0) if s == len(names) else (p, s)
            if ckpt:
                host = [parallel.to_host(x) for x in ((factors if keep else None), state.alpha, state.beta)
                        if x is not None]  # every process takes part (a gather may be a collective)
                require_finite(host[-2:], f"lmp pass {p + 1} shard {s}")
                if cluster.is_writer:
                    _commit_lmp(ckpt, names[s - 1], host, settings, nxt, keep)
        p, s = p + 1, 0
    _memory_factors.clear()
    return lmp.log_gamma(state), {}, True


_memory_factors: dict = {}  # factors of a multi-pass LMP run without a checkpoint folder


def _commit_lmp(ckpt: Path, name: str, host: list, settings: dict, nxt: tuple, keep: bool) -> None:
    """Checkpoint LMP after shard ``name``: host = [factors [nb, K] (if keep), alpha [K], beta [K]]; the factor
    file is written as pending, the state naming it as committed, then the file is renamed."""
    alpha, beta = host[-2:]
    if keep:
        save_npy_atomic(factor_path(ckpt, name, pending=True), host[0])
    save_state(ckpt, {"alpha": alpha, "beta": beta},
               {"settings": settings, "pass": nxt[0], "shard": nxt[1], "committed": name if keep else None})
    if keep:
        os.replace(factor_path(ckpt, name, pending=True), factor_path(ckpt, name))


def _train_sgd(shards, names, ckpt, arrays, info, settings, mesh, stop_after, log):
    import optax

    passes, batch = settings["passes"], settings["batch"]
    optimizer = optax.adam(settings["lr"])
    cluster = distributed.current()
    fixed = replicate(mesh, fixed_levels(shards))
    params = jnp.zeros(fixed.shape[0], jnp.float32)
    opt_state = optimizer.init(params)
    leaves, treedef = jax.tree.flatten(opt_state)
    total = sum(len(shardlib.Shard(shards, n)) for n in names)
    if ckpt and info is not None:
        check_progress(info, {"pass": passes, "shard": len(names) - 1}, ckpt)
        check_arrays(arrays, {"params": params.shape, **{f"opt{i}": x.shape for i, x in enumerate(leaves)}}, ckpt)
        params = jnp.asarray(arrays["params"])
        opt_state = jax.tree.unflatten(treedef, [jnp.asarray(arrays[f"opt{i}"]) for i in range(len(leaves))])
        p, s = info["pass"], info["shard"]
    else:
        p, s = 0, 0
    params, opt_state = parallel.put_replicated(mesh, (params, opt_state))
    done, last = 0, None
    while p < passes:
        while s < len(names):
            if stop_after is not None and done >= stop_after:
                return jnp.where(fixed, 0.0, params), {}, False
            codes, meta, valid = shard_batches(shardlib.Shard(shards, names[s]), batch, mesh)
            prior_weight = replicate(mesh, np.float32(batch / total))  # the prior counted once per pass
            params, opt_state, losses = _sgd_shard(params, opt_state, codes, meta, valid, fixed, prior_weight,
                                                   optimizer=optimizer)
            last = float(parallel.to_host(jnp.mean(losses)))
            s += 1
            done += 1
            log(f"sgd pass {p + 1}/{passes} shard {s}/{len(names)} loss {last:.4f}")
            if ckpt:
                nxt = (p + 1, 0) if s == len(names) else (p, s)
                flat = [parallel.to_host(x) for x in jax.tree.leaves(opt_state)]
                host = parallel.to_host(params)
                require_finite(host, f"sgd pass {p + 1} shard {s}")
                if cluster.is_writer:
                    save_state(ckpt, {"params": host, **{f"opt{i}": x for i, x in enumerate(flat)}},
                               {"settings": settings, "pass": nxt[0], "shard": nxt[1]})
        p, s = p + 1, 0
    return jnp.where(fixed, 0.0, params), {"last_batch_loss": last}, True


MM_CHUNK = 64  # batches per device call of an MM pass


def _mm_data(shards, names, batch, rows=None):
    """All positions of the shards as host arrays (codes [nb, B, P+1(, 2)], meta [nb, B, 4], valid [nb, B]),
    filled shard by shard (``shards.batches_of``; one memory map open at a time, so the maps' pages do not stay
    resident): MM's memory is this data.  rows=(lo, hi): only those rows of every batch (this process's share
    of a multi-process run; B = hi - lo)."""
    entries = {s["name"]: s["positions"] for s in shardlib.read_manifest(shards)["shards"]}

    def parts():
        for name in names:
            shard = shardlib.Shard(shards, name)
            yield shard.codes, shard.meta

    return shardlib.batches_of(parts(), sum(entries[n] for n in names), batch, rows)


def _mm_pass(fn, data, mesh):
    """Sum of ``fn(codes, meta, valid)`` over chunks of ``MM_CHUNK`` batches (one device call each)."""
    total = None
    for lo in range(0, data[0].shape[0], MM_CHUNK):
        chunk = parallel.put_batches(mesh, tuple(a[lo:lo + MM_CHUNK] for a in data), axis=1)
        part = fn(*chunk)
        total = part if total is None else jax.tree.map(jnp.add, total, part)
    return total


def _train_mm(shards, names, ckpt, arrays, info, settings, mesh, stop_after, log):
    batch, iterations = settings["batch"], settings["iterations"]
    cluster = distributed.current()
    rows = parallel.process_rows(mesh, batch) if parallel.multi_process(mesh) else None
    data = _mm_data(shards, names, batch, rows)  # MM keeps everything (of this process's share) in memory
    groups, sizes, fixed = layout(shardlib.large_dictionary(shards))
    num = len(fixed)
    zeros = parallel.put_replicated(mesh, jnp.zeros(num, jnp.float32))
    wins, occ = _mm_pass(lambda c, m, v: _counts(c, m, v, zeros), data, mesh)
    entries = {e["name"]: e["positions"] for e in shardlib.read_manifest(shards)["shards"]}
    positions = float(sum(entries[n] for n in names))
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    if ckpt and info is not None:
        check_progress(info, {"sweep": iterations}, ckpt)
        check_arrays(arrays, {"log_gamma": (num,)}, ckpt)
        lg, sweep = jnp.asarray(arrays["log_gamma"]), info["sweep"]
    else:
        lg, sweep = jnp.zeros(num, jnp.float32), 0
    lg = parallel.put_replicated(mesh, lg)
    done, ll = 0, None
    while sweep < iterations:
        if stop_after is not None and done >= stop_after:
            return lg, {}, False
        for g in range(len(groups)):
            group = replicate(mesh, np.int32(g))
            denom = _mm_pass(lambda c, m, v: _mm_denominator(lg, c, m, v, group), data, mesh)
            in_group = np.zeros(num, bool)
            in_group[offsets[g]:offsets[g + 1]] = True
            update = replicate(mesh, in_group & ~fixed) & (occ > 0)
            lg = _mm_update(lg, wins, denom, update)
        sweep += 1
        done += 1
        ll = float(parallel.to_host(_mm_pass(lambda c, m, v: _ll_sum(lg, c, m, v), data, mesh))) / positions
        log(f"mm sweep {sweep}/{iterations} train mean log-likelihood {ll:.4f}")
        if ckpt:
            host = parallel.to_host(lg)
            require_finite(host, f"mm sweep {sweep}")
            if cluster.is_writer:
                save_state(ckpt, {"log_gamma": host}, {"settings": settings, "sweep": sweep})
    return lg, {"train_mean_log_likelihood": ll}, True
