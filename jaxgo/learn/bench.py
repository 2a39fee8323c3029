"""``jaxgo bench gammas``: extraction speed, LMP speed, and MM vs LMP wall time / peak memory.

    jaxgo bench gammas [--games 64] [--large default] [--shards DIR] [--subsets 1,4] [--mm-iterations 2]
                       [--lmp-passes 1]
    jaxgo bench gammas --shards DIR --processes 1 2 [--method lmp|mm|sgd] [--lmp-passes 1]

Prints one JSON object.  ``extract_positions_per_s``: packed features of every move (vmapped scan over ``--batch``
games, compiled beforehand for every padded game length; SGF parsing excluded, reported apart).
``lmp_examples_per_s``: LMP batch updates over one shard (positions per second, compiled beforehand).  ``--large``:
the extraction again with a large-pattern dictionary (``with_large``).  With ``--shards`` (a folder from ``jaxgo
gammas extract``) MM and LMP are each run in a fresh subprocess on the first n shards for every n in ``--subsets``,
reporting wall time and peak RSS (``resource.getrusage``): MM holds every shard in memory, LMP streams one at a
time.

``--processes 1 2``: training speed with several ``jax.distributed`` processes on this host instead (nothing
else is timed).  For each count n, n processes (a coordinator on a free localhost port) train on ``--shards``
with ``--method``, each pinned to its 1/n share of the cores (n = 1: one ordinary process with every core);
every run is made twice in the same processes and the second one timed (compilation excluded, shard reading
included).  One JSON line per configuration: ``examples_per_s`` (positions x passes, or x sweeps for MM, per
second), ``ratio_vs_first`` (against the first count given) and ``max_abs_log_gamma_diff_vs_first`` (the
final gammas of both runs compared).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _extraction(games: int, batch: int, data_root=None, large=None) -> dict:
    from jaxgo.data import iter_records, train_archives
    from jaxgo.features.games import games_codes

    t0 = time.perf_counter()
    records = [r for _, r in iter_records(train_archives(data_root), limit=games + batch)]
    parse_s = time.perf_counter() - t0
    if not records:
        return {"extract_error": "no training archives found"}
    games_codes(records[batch:], batch=batch, large_dictionary=large)  # compile every padded length
    t0 = time.perf_counter()
    out = games_codes(records[batch:], batch=batch, large_dictionary=large)
    seconds = time.perf_counter() - t0
    positions = sum(len(m) for _, m in out)
    parsed_positions = sum(len(r.moves) for r in records)
    return {"extract_games": len(out), "extract_positions": positions, "extract_seconds": round(seconds, 2),
            "extract_positions_per_s": round(positions / seconds, 1),
            "sgf_parse_positions_per_s": round(parsed_positions / parse_s, 1), "extract_batch": batch,
            "extract_large_patterns": 0 if large is None else len(large)}


def _lmp_speed(shard_folder, batch: int) -> dict:
    import jax
    import jax.numpy as jnp

    from jaxgo.learn import lmp
    from jaxgo.learn import shards as shardlib
    from jaxgo.learn.train import fixed_levels, lmp_shard, shard_batches

    name = shardlib.shard_names(shard_folder)[0]
    codes, meta, valid = shard_batches(shardlib.Shard(shard_folder, name), batch, None)
    fixed = fixed_levels(shard_folder)
    state = lmp.init(len(fixed), fixed)
    jax.block_until_ready(lmp_shard(state, codes[:2], meta[:2], valid[:2], None, jnp.bool_(True), keep=False))
    jax.block_until_ready(lmp_shard(state, codes, meta, valid, None, jnp.bool_(True), keep=False))  # compile
    t0 = time.perf_counter()
    out, _ = lmp_shard(state, codes, meta, valid, None, jnp.bool_(True), keep=False)
    jax.block_until_ready(out)
    seconds = time.perf_counter() - t0
    n = int(valid.sum())
    return {"lmp_examples": n, "lmp_seconds": round(seconds, 2), "lmp_examples_per_s": round(n / seconds, 1),
            "lmp_batch": batch}


def _subset(folder, n: int, into: Path) -> Path:
    from jaxgo.learn import shards as shardlib
    from jaxgo.util.files import write_json_atomic

    manifest = shardlib.read_manifest(folder)
    entries = manifest["shards"][:n]
    into.mkdir(parents=True, exist_ok=True)
    for e in entries:
        for part in ("codes", "meta", "games"):
            link = into / f"{e['name']}.{part}.npy"
            if not link.exists():
                link.symlink_to(Path(folder).resolve() / f"{e['name']}.{part}.npy")
    large = Path(folder) / shardlib.LARGE_FILE
    if large.exists() and not (into / shardlib.LARGE_FILE).exists():
        (into / shardlib.LARGE_FILE).symlink_to(large.resolve())
    write_json_atomic(into / shardlib.MANIFEST, dict(manifest, shards=entries))
    return into


def _child(args) -> int:
    from jaxgo.learn.train import train

    t0 = time.perf_counter()
    summary = train(args.child_shards, args.child, None, iterations=args.mm_iterations, passes=args.lmp_passes,
                    batch=args.batch_positions)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB on Linux
    print(json.dumps({"method": args.child, "games": summary["games"], "positions": summary["positions"],
                      "wall_s": round(wall, 1), "peak_rss_mib": round(peak, 1)}))
    return 0


def _memory(args) -> list:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(x) for x in args.subsets.split(",")]:
            folder = _subset(args.shards, n, Path(tmp) / f"n{n}")
            for method in ("lmp", "mm"):
                cmd = [sys.executable, "-m", "jaxgo.learn.bench", "--child", method, "--child-shards", str(folder),
                       "--mm-iterations", str(args.mm_iterations), "--lmp-passes", str(args.lmp_passes),
                       "--batch-positions", str(args.batch_positions)]
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    results.append({"method": method, "shards": n, "error": proc.stderr[-500:]})
                else:
                    results.append(dict(json.loads(proc.stdout.strip().splitlines()[-1]), shards=n))
    return results


def _examples(summary: dict) -> int:
    """Positions visited by a training run: positions x passes (LMP, SGD) or x sweeps (MM)."""
    return summary["positions"] * (summary["iterations"] if summary["method"] == "mm" else summary["passes"])


def _process_child(args) -> int:
    """One process of a ``--processes`` configuration: join the run, train twice, time the second run; process 0
    prints one JSON object and writes the gammas to ``--child-out``."""
    from jaxgo.util import distributed

    distributed.pin_cores(args.cores)  # before jax starts
    if args.num_processes > 1:
        distributed.initialize(args.coordinator, args.num_processes, args.process_id, init_timeout=120,
                               heartbeat_timeout=60)
    from jaxgo.learn.train import train

    kwargs = dict(iterations=args.mm_iterations, passes=args.lmp_passes, batch=args.batch_positions)
    try:
        train(args.child_shards, args.method, None, **kwargs)  # compiles every shard length
        distributed.barrier("jaxgo-bench-start")
        t0 = time.perf_counter()
        summary = train(args.child_shards, args.method, args.child_out, **kwargs)
        seconds = time.perf_counter() - t0
    except Exception as exc:
        distributed.fail(f"process {args.process_id}/{args.num_processes}: {exc}")
    if args.process_id == 0:
        import jax

        print(json.dumps({"seconds": seconds, "examples": _examples(summary), "devices": summary["devices"],
                          "positions": summary["positions"], "backend": jax.default_backend()}), flush=True)
    distributed.shutdown()
    return 0


def _wait_all(procs, timeout: float) -> list[tuple[str, str]]:
    """(stdout, stderr) of every process; the ones still running after ``timeout`` seconds are killed (their
    stderr then says so)."""
    deadline = time.monotonic() + timeout
    outputs = []
    for p in procs:
        try:
            outputs.append(p.communicate(timeout=max(1.0, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            outputs.append((out, err + f"\nkilled after {timeout:g} s"))
    return outputs


def _processes(args):
    """Time every process count of ``--processes`` (``_process_child`` runs); yields one result dict per count.
    (This parent process never starts a JAX backend, so the children have the devices to themselves.)"""
    import numpy as np

    from jaxgo.features.gammas import load
    from jaxgo.util.distributed import core_shares, format_cores, free_port

    first = None
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.processes:
            out = Path(tmp) / f"p{n}.npz"
            port = free_port()
            shares = core_shares(n) if n > 1 else [None]
            procs = []
            for i, cores in enumerate(shares):
                cmd = [sys.executable, "-m", "jaxgo.learn.bench", "--process-child", "--method", args.method,
                       "--child-shards", str(args.shards), "--child-out", str(out), "--mm-iterations",
                       str(args.mm_iterations), "--lmp-passes", str(args.lmp_passes), "--batch-positions",
                       str(args.batch_positions), "--coordinator", f"127.0.0.1:{port}", "--num-processes", str(n),
                       "--process-id", str(i), "--cores", format_cores(cores)]
                procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
            outputs = _wait_all(procs, args.timeout)
            row = {"benchmark": "gammas", "cpu_count": os.cpu_count(), "method": args.method,
                   "processes": n,
                   "cores_per_process": len(shares[0]) if shares[0] else len(os.sched_getaffinity(0))}
            if any(p.returncode for p in procs):
                row["error"] = " | ".join(err.strip().splitlines()[-1] for _, err in outputs if err.strip())
                yield row
                continue
            child = json.loads(outputs[0][0].strip().splitlines()[-1])
            gammas = load(out).log_gamma
            first = first or (child, gammas)
            row.update(backend=child["backend"], devices=child["devices"], positions=child["positions"],
                       batch=args.batch_positions,
                       passes=args.mm_iterations if args.method == "mm" else args.lmp_passes,
                       seconds=round(child["seconds"], 2),
                       examples_per_s=round(child["examples"] / child["seconds"], 1),
                       ratio_vs_first=round(first[0]["seconds"] / child["seconds"] * child["examples"]
                                            / first[0]["examples"], 3),
                       max_abs_log_gamma_diff_vs_first=float(np.abs(gammas - first[1]).max()))
            yield row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="jaxgo bench gammas", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=64, help="training games to extract for the speed figure")
    parser.add_argument("--batch", type=int, default=16, help="games per vmapped extraction call")
    parser.add_argument("--data", default=None, help="data root (default: $JAXGO_DATA, else ../shared/data beside "
                                                      "the checkout)")
    parser.add_argument("--shards", default=None, help="shard folder for the LMP speed and MM-vs-LMP runs")
    parser.add_argument("--subsets", default="1,4", help="numbers of shards for the MM vs LMP runs")
    parser.add_argument("--mm-iterations", type=int, default=2)
    parser.add_argument("--lmp-passes", type=int, default=1)
    parser.add_argument("--batch-positions", type=int, default=1024, help="positions per LMP/MM batch")
    parser.add_argument("--skip-extract", action="store_true")
    parser.add_argument("--large", default=None,
                        help="time the extraction with large patterns too: 'default' (the shipped large model's "
                             "dictionary) or a dictionary file")
    parser.add_argument("--processes", type=int, nargs="+", default=None,
                        help="time training with these numbers of jax.distributed processes on this host (needs "
                             "--shards; nothing else is timed)")
    parser.add_argument("--method", choices=["lmp", "mm", "sgd"], default="lmp", help="learner for --processes")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds allowed to one --processes run")
    parser.add_argument("--child", choices=["mm", "lmp"], help=argparse.SUPPRESS)
    parser.add_argument("--child-shards", help=argparse.SUPPRESS)
    parser.add_argument("--process-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child-out", help=argparse.SUPPRESS)
    parser.add_argument("--coordinator", help=argparse.SUPPRESS)
    parser.add_argument("--num-processes", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--process-id", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--cores", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args)
    if args.process_child:
        return _process_child(args)
    if args.processes:
        if not args.shards:
            parser.error("--processes needs --shards (a folder from `jaxgo gammas extract`)")
        failed = False
        for row in _processes(args):
            print(json.dumps(row), flush=True)
            failed = failed or "error" in row
        return 1 if failed else 0
    import jax

    out = {"benchmark": "gammas", "backend": jax.default_backend(), "devices": len(jax.devices()),
           "cpu_count": os.cpu_count()}
    if not args.skip_extract:
        out.update(_extraction(args.games, args.batch, args.data))
        if args.large:
            from jaxgo.features.gammas import load_default_large
            from jaxgo.features.large import LargeDictionary

            large = load_default_large().large if args.large == "default" else LargeDictionary.load(args.large)
            with_large = _extraction(args.games, args.batch, args.data, large)
            out["with_large"] = {k: v for k, v in with_large.items() if k.startswith("extract")}
    if args.shards:
        out.update(_lmp_speed(args.shards, args.batch_positions))
        out["mm_vs_lmp"] = _memory(args)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
