"""``jaxgo bench heavy``: heavy-playout throughput next to light playouts, same batch, same process.

Prints one JSON line per (size, batch, kind) with the keys of ``jaxgo bench playouts`` (system ``jaxgo-light``
or ``jaxgo-heavy``) and one ``ratio`` line per (size, batch): heavy playouts/s over light playouts/s (the
issue's target is >= 0.25).  Both run sharded over the same XLA devices (CPU: one per core) from the empty
board; the heavy ones use the shipped gammas (``--gammas synthetic`` for made-up ones, a gamma ``.npz`` file
or a ``.npy`` of log-gammas).  Compilation is timed apart; then the timed calls of light and heavy alternate
(light, heavy, light, heavy, ...) so that a shared machine's changing load affects both, and the best of
``--repeats`` calls of each is reported.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from jaxgo.playouts.bench import throughput as light_bench
from jaxgo.util.devices import configure_host_devices


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="jaxgo bench heavy", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, nargs="+", default=[9], help="board sizes (default 9)")
    parser.add_argument("--batch", type=int, nargs="+", default=None,
                        help="playouts per device call (default 4096 for 9x9, 1024 for larger boards)")
    parser.add_argument("--lanes", type=int, default=None, help="boards advanced together per device")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls per configuration (best is reported)")
    parser.add_argument("--devices", type=int, default=None, help="XLA devices to shard over (CPU: one per core)")
    parser.add_argument("--komi", type=float, default=7.5)
    parser.add_argument("--gammas", default="default",
                        help="'default' (shipped), 'synthetic' (made-up, seed 0), 'rules' (MoGo-style rule policy, "
                             "jaxgo.playouts.xla.rules), a gamma .npz file or a .npy of log-gammas")
    parser.add_argument("--only", choices=["both", "heavy", "light"], default="both")
    return parser.parse_args(argv)


def load_tables(spec: str):
    import numpy as np

    from jaxgo.playouts.xla import heavy as hp

    if spec == "default":
        return hp.load_default_tables()
    if spec == "synthetic":
        return hp.policy_tables(hp.synthetic_log_gammas(0))
    if spec == "rules":  # the MoGo-style rule policy in the same loop
        from jaxgo.playouts.xla import rules as rule_policy

        return rule_policy.rule_tables()
    if spec.endswith(".npz"):  # a `jaxgo gammas train` file
        from jaxgo.playouts.evaluator import load_log_gammas

        return hp.policy_tables(load_log_gammas(spec))
    return hp.policy_tables(np.load(spec))


def prepare(size: int, batch: int, kind: str, tables, komi: float, devices: int | None, lanes: int | None):
    """Compile one configuration.  Returns (run(seed) -> (moves, winners) as numpy, compile seconds, devices)."""
    import jax
    import numpy as np
    from jax.sharding import Mesh, PartitionSpec

    from jaxgo.playouts.evaluator import light_kernel
    from jaxgo.playouts.xla import heavy as hp

    playout = light_kernel()  # the evaluator's light kernel on this backend
    devs = jax.devices()[: devices or len(jax.devices())]
    while batch % len(devs):
        devs = devs[:-1]
    mesh = Mesh(np.array(devs), ("batch",))
    per_device = batch // len(devs)

    def local(keys, tables):
        if kind == "heavy":
            result = hp.run_from_empty(size, per_device, keys[0], komi, gammas=tables, lanes=lanes)
        else:
            result = playout.run_from_empty(size, per_device, keys[0], komi, lanes=lanes)
        return result.num_moves, result.winner

    replicated = jax.tree_util.tree_map(lambda _: PartitionSpec(), tables)
    jitted = jax.jit(jax.shard_map(local, mesh=mesh, in_specs=(PartitionSpec("batch"), replicated),
                                   out_specs=PartitionSpec("batch"), check_vma=False))

    def keys(seed):
        return jax.random.split(jax.random.PRNGKey(seed), len(devs))

    start = time.perf_counter()
    executable = jitted.lower(keys(0), tables).compile()
    compile_s = time.perf_counter() - start

    def run(seed):
        return tuple(np.asarray(x) for x in jax.block_until_ready(executable(keys(seed), tables)))

    return run, compile_s, devs


def bench_kinds(size: int, batch: int, kinds, tables, repeats: int, komi: float, devices: int | None,
                lanes: int | None) -> dict:
    """One record per kind.  All kinds are compiled first, then their timed calls alternate (light, heavy,
    light, heavy, ...), so a change in machine load during the run hits both alike; the best call of each is
    reported.  Call r of every kind uses the same seed r."""
    prepared = {kind: prepare(size, batch, kind, tables, komi, devices, lanes) for kind in kinds}
    best = {kind: float("inf") for kind in kinds}
    outputs = {}
    for seed in range(1, repeats + 1):
        for kind, (run, _, _) in prepared.items():
            start = time.perf_counter()
            outputs[kind] = run(seed)
            best[kind] = min(best[kind], time.perf_counter() - start)
    records = {}
    for kind, (_, compile_s, devs) in prepared.items():
        moves, winners = outputs[kind]
        records[kind] = light_bench.playout_record(f"jaxgo-{kind}", devs[0].platform, len(devs), size, batch,
                                                   compile_s, best[kind], moves, winners == 1)
    return records


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    configure_host_devices(args.devices)
    tables = load_tables(args.gammas)
    kinds = ["light", "heavy"] if args.only == "both" else [args.only]
    for size in args.size:
        for batch in args.batch or [light_bench.default_batch(size)]:
            records = bench_kinds(size, batch, kinds, tables, args.repeats, args.komi, args.devices, args.lanes)
            for kind in kinds:
                print(json.dumps(records[kind]), flush=True)
            if len(records) == 2:
                ratio = records["heavy"]["playouts_per_s"] / records["light"]["playouts_per_s"]
                print(json.dumps({"system": "ratio", "size": size, "batch": batch,
                                  "heavy_playouts_per_s": records["heavy"]["playouts_per_s"],
                                  "light_playouts_per_s": records["light"]["playouts_per_s"],
                                  "heavy_over_light": light_bench.significant(ratio),
                                  "heavy_moves_per_s_over_light": light_bench.significant(
                                      records["heavy"]["moves_per_s"] / records["light"]["moves_per_s"]),
                                  "gammas": args.gammas}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
