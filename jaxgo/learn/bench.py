"""``jaxgo bench gammas``: extraction speed, LMP speed, and MM vs LMP wall time / peak memory.

    jaxgo bench gammas [--games 64] [--large default] [--shards DIR] [--subsets 1,4] [--mm-iterations 2]
                       [--lmp-passes 1]

Prints one JSON object.  ``extract_positions_per_s``: packed features of every move (vmapped scan over
``--batch`` games, compiled beforehand for every padded game length; SGF parsing excluded, reported apart).  ``lmp_examples_per_s``: LMP
batch updates over one shard (positions per second, compiled beforehand).  ``--large``: the extraction again with
a large-pattern dictionary (``with_large``).  With ``--shards`` (a folder from
``jaxgo gammas extract``) MM and LMP are each run in a fresh subprocess on the first n shards for every n in
``--subsets``, reporting wall time and peak RSS (``resource.getrusage``): MM holds every shard in memory, LMP
streams one at a time.
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

    from jaxgo.learn import shards as shardlib
    from jaxgo.learn import lmp
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
    parser.add_argument("--child", choices=["mm", "lmp"], help=argparse.SUPPRESS)
    parser.add_argument("--child-shards", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args)
    import jax

    out = {"benchmark": "gammas", "backend": jax.default_backend(), "devices": len(jax.devices()),
           "cpu_count": os.cpu_count()}
    if not args.skip_extract:
        out.update(_extraction(args.games, args.batch, args.data))
        if args.large:
            from jaxgo.features.large import LargeDictionary
            from jaxgo.features.gammas import load_default_large

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
