"""Do the playouts give the same games on an accelerator as on the CPU?  One JSON line per check.

The light playouts (both kernels: ``light``, "sample, then validate", and ``light_wide``, dense sampling for
wide devices) draw every random number from a per-playout xorshift32 stream and use integer arithmetic only, so
a key fixes every game whatever the device and the number of lanes; the heavy and rule playouts share that
stream but pick a move by comparing a random number with a float32 cumulative sum of gammas, so a device whose
sums round differently may pick another move now and then.  This runs the same keys on JAX's default device (a
GPU where there is one) and on the CPU in one process and prints, per policy and board size, how many playouts
agree in every output (winner, score, move count, final ownership), and the mean move count and Black's win
rate on each device:

    python scripts/device_check.py --size 9 19 --batch 4096      (or: jaxgo eval device-check ...)

The two runs use different lanes (``--lanes`` on the accelerator, ``--cpu-lanes`` on the CPU), so the check also
covers the promise that results do not depend on the lanes.  Exit status 1 if light playouts differ anywhere
(they must not); the heavy and rule playouts are reported.
With no accelerator both runs are on the CPU and the check is trivial (it says so: ``"same_device": true``).
"""

from __future__ import annotations

import argparse
import json
import time

import jax
import numpy as np

from jaxgo.playouts.xla import heavy, light, light_wide
from jaxgo.playouts.xla import rules as rule_policy

LIGHT = {"light": light, "light_wide": light_wide}


def run_on(device, policy: str, size: int, batch: int, lanes: int | None, seed: int):
    """(PlayoutResult as numpy arrays, seconds) of ``batch`` playouts from the empty board on ``device``."""
    with jax.default_device(device):
        key = jax.random.PRNGKey(seed)
        start = time.perf_counter()
        if policy in LIGHT:
            result = LIGHT[policy].run_from_empty(size, batch, key, lanes=lanes)
        else:
            tables = heavy.load_default_tables() if policy == "heavy" else rule_policy.rule_tables()
            result = heavy.run_from_empty(size, batch, key, gammas=tables, lanes=lanes)
        result = jax.block_until_ready(result)
        seconds = time.perf_counter() - start
    arrays = {name: np.asarray(getattr(result, name)) for name in ("winner", "score", "num_moves", "ownership")}
    return arrays, seconds


def compare(a: dict, b: dict) -> np.ndarray:
    """bool [batch]: the playouts whose every output is equal on both sides."""
    same = np.ones(len(a["winner"]), bool)
    for name in a:
        x, y = a[name].reshape(len(same), -1), b[name].reshape(len(same), -1)
        same &= (x == y).all(axis=1)
    return same


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="jaxgo eval device-check", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, nargs="+", default=[9, 19])
    parser.add_argument("--batch", type=int, default=4096, help="playouts per policy and size (default 4096)")
    parser.add_argument("--lanes", type=int, default=None,
                        help="boards advanced together on the accelerator (default: its default lanes)")
    parser.add_argument("--cpu-lanes", type=int, default=256,
                        help="boards advanced together on the CPU (default 256, a CPU-sized count; the default "
                             "lanes follow the default backend, so on a GPU host they would be the GPU's)")
    parser.add_argument("--policies", nargs="+", default=["light", "light_wide", "heavy", "rules"],
                        choices=["light", "light_wide", "heavy", "rules"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    accelerator, cpu = jax.devices()[0], jax.devices("cpu")[0]
    failed = False
    for policy in args.policies:
        for size in args.size:
            ours, seconds = run_on(accelerator, policy, size, args.batch, args.lanes, args.seed)
            theirs, cpu_seconds = run_on(cpu, policy, size, args.batch, args.cpu_lanes, args.seed)
            same = compare(ours, theirs)
            record = {
                "check": "device_vs_cpu", "policy": policy, "size": size, "batch": args.batch,
                "device": accelerator.platform, "device_kind": accelerator.device_kind,
                "same_device": accelerator.platform == "cpu", "lanes": [args.lanes, args.cpu_lanes],
                "identical_playouts": int(same.sum()), "identical_fraction": round(float(same.mean()), 5),
                "mean_moves": [round(float(d["num_moves"].mean()), 2) for d in (ours, theirs)],
                "black_win_rate": [round(float((d["winner"] == 1).mean()), 4) for d in (ours, theirs)],
                "seconds_with_compile": [round(seconds, 2), round(cpu_seconds, 2)],
            }
            print(json.dumps(record), flush=True)
            failed |= policy in LIGHT and not same.all()
    return 1 if failed else 0

