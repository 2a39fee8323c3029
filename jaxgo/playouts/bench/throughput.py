"""``jaxgo bench playouts``: playout throughput of both backends, optionally against Libego, pgx and OpenSpiel
timed in the same run.

Prints one JSON line per configuration (keys: system, device, devices, size, batch, compile_s, playouts_per_s,
moves_per_s, mean_moves, black_win_rate; native lines add backend, policy, threads and cpu_playouts_per_s) and,
with ``--compare``, ratio lines.

Backends (``--backend``, default auto: native on a CPU, XLA on an accelerator):
    native  ``jaxgo.playouts.native``: one board at a time, compiled by numba, the batch spread over
            ``--threads`` threads (default: one thread, then one per core); every playout records what a search
            needs (score, ownership, first colours).  Timed by the wall clock; one-thread lines also give the
            rate per CPU-second of the process (``cpu_playouts_per_s``), which Libego reports.
    xla     the batched kernels; on a CPU the host is split into ``--devices`` XLA devices (default: one per
            core) and the batch is sharded across them with ``shard_map``; the same code shards over GPUs.
Policies (``--policy``): light (default), heavy and the rule policies (``jaxgo.playouts.POLICIES``).

Peers: Libego (``libego``, built once from ``../shared/peers/libego`` with its ``build.sh`` into
``--libego-dir``; skipped with a message when the source or a compiler is missing) runs its light playouts for
the light policy and its 3x3-gamma sampler for the others, each repeat interleaved with jaxgo's, as many
processes at once as jaxgo has threads (one per core), its rates from its own CPU-time report; a ``ratio``
line per size, policy and thread count gives native / Libego (one thread: by CPU time).  pgx runs its
documented vmapped API (uniform random legal actions, pass included) on one device, as its users run it;
OpenSpiel plays uniform random games through its Python API (C++ game logic).  Both play uniform random games,
so they are compared with light playouts only (another policy says so on stderr), against the XLA lines when the
XLA backend runs, else against the native lines (the best thread count).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from jaxgo.playouts import POLICIES
from jaxgo.util.devices import configure_host_devices, shard_batch


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="jaxgo bench playouts", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, nargs="+", default=[9], help="board sizes (default 9)")
    parser.add_argument("--batch", type=int, nargs="+", default=None,
                        help="playouts per device call; several values sweep (default 4096 for 9x9, 1024 for 19x19)")
    parser.add_argument("--lanes", type=int, nargs="+", default=[None],
                        help="boards advanced together per device (default: the kernel's default_lanes); several "
                             "values sweep")
    parser.add_argument("--backend", nargs="+", default=["auto"], choices=["auto", "native", "xla"],
                        help="playout backends to time (default auto: native on a CPU, xla on an accelerator)")
    parser.add_argument("--light-kernel", nargs="+", default=["auto"], choices=["auto", "validate", "wide"],
                        help="xla light playouts: validate (sample, then validate: jaxgo.playouts.xla.light), "
                             "wide (dense sampling in step: jaxgo.playouts.xla.light_wide) or auto (the evaluator's "
                             "choice: wide on an accelerator); several values time each")
    parser.add_argument("--refill-every", type=int, nargs="+", default=[None],
                        help="wide kernel: iterations between hand-ins of finished lanes (default: the kernel's); "
                             "several values sweep")
    parser.add_argument("--policy", nargs="+", default=["light"], choices=list(POLICIES),
                        help="playout policies (default light)")
    parser.add_argument("--threads", type=int, nargs="+", default=None,
                        help="native: threads to spread a batch over; several values sweep (default 1 and one "
                             "per core)")
    parser.add_argument("--compare", default="", help="comma-separated peers: libego,pgx,openspiel")
    parser.add_argument("--libego-dir", default=None,
                        help="where Libego's engines are built and found (default ~/.cache/jaxgo/libego)")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls per configuration (best is reported)")
    parser.add_argument("--devices", type=int, default=None,
                        help="XLA devices to shard over (CPU: default one per core; GPU: all visible)")
    parser.add_argument("--komi", type=float, default=7.5)
    parser.add_argument("--pgx-batch", type=int, default=1024,
                        help="largest batch given to pgx (its games/s barely change with batch; default 1024)")
    parser.add_argument("--openspiel-seconds", type=float, default=5.0, help="time spent on OpenSpiel games")
    parser.add_argument("--json", action="store_true", help="JSON lines only (no table)")
    return parser.parse_args(argv)


def default_batch(size: int, backend: str = "xla", policy: str = "light") -> int:
    """Playouts per timed call: about a second of native playouts on one core, or the XLA batch."""
    if backend == "native":
        light = policy == "light"
        return (40000 if light else 4000) if size <= 9 else ((8000 if light else 800) if size <= 13 else
                                                            (10000 if light else 1000))
    return 4096 if size <= 9 else 1024


def bench_native(size: int, batch: int, komi: float, policy: str, threads: int) -> dict:
    """One JSON record of one timed call of ``batch`` native playouts from the empty board (after a call of two
    that compiles, or loads numba's cache: ``compile_s``)."""
    import numpy as np

    from jaxgo.playouts.evaluator import make_evaluator
    from jaxgo.playouts.native import runner

    arrays = make_evaluator(policy, backend="native").native_policy(size)
    points = size * size
    start = (np.zeros((1, points), np.int8), np.ones(1), np.full(1, -1), np.zeros(1), np.full((1, 2), -1))
    began = time.perf_counter()
    runner.play_batch(arrays, *start, 2, 0, threads)  # compiles, or loads numba's cache
    compile_s = time.perf_counter() - began
    wall, cpu = time.perf_counter(), time.process_time()
    raw = runner.play_batch(arrays, *start, batch, 1, threads)
    seconds, cpu_seconds = time.perf_counter() - wall, time.process_time() - cpu
    record = playout_record("jaxgo", "cpu", 1, size, batch, compile_s, seconds, raw.moves, raw.score - komi > 0)
    record.update(backend="native", policy=policy, threads=threads,
                  cpu_playouts_per_s=round(batch / max(cpu_seconds, 1e-9), 1))
    return record


def bench_jaxgo(size: int, batch: int, repeats: int, komi: float, devices: int | None,
                lanes: int | None = None, policy: str = "light", kernel: str = "auto",
                refill_every: int | None = None) -> dict:
    """One JSON record of XLA playouts of ``policy`` from the empty board, sharded over the devices; light
    playouts with ``kernel`` (``evaluator.light_kernel``)."""
    import jax
    import numpy as np

    from jaxgo.playouts.evaluator import light_kernel, make_evaluator
    from jaxgo.playouts.xla import heavy

    tables = None if policy == "light" else make_evaluator(policy, backend="xla").tables
    playout = light_kernel(kernel)
    options = {} if refill_every is None or playout.__name__.endswith("light") else {"refill_every": refill_every}

    devs = jax.devices()[: devices or len(jax.devices())]
    while batch % len(devs):
        devs = devs[:-1]
    per_device = batch // len(devs)

    def local(keys):
        if tables is None:
            result = playout.run_from_empty(size, per_device, keys[0], komi, lanes=lanes, **options)
        else:
            result = heavy.run_from_empty(size, per_device, keys[0], komi, gammas=tables, lanes=lanes)
        return result.num_moves, result.winner

    run = shard_batch(local, devs, split=(True,))

    def keys(seed):
        return jax.random.split(jax.random.PRNGKey(seed), len(devs))

    compile_s, run = _compile(run, keys(0))
    best, (moves, winners) = _best_time(run, [keys(seed) for seed in range(1, repeats + 1)])
    moves, winners = np.asarray(moves), np.asarray(winners)
    record = playout_record("jaxgo", devs[0].platform, len(devs), size, batch, compile_s, best, moves, winners == 1)
    record.update(backend="xla", policy=policy, lanes=lanes or "default")
    if policy == "light":
        record.update(kernel=playout.__name__.rsplit(".", 1)[-1], **options)
    return record


def _compile(jitted, example):
    """(seconds, executable): ahead-of-time compilation, timed apart from the runs."""
    start = time.perf_counter()
    executable = jitted.lower(example).compile()
    return time.perf_counter() - start, executable


def _best_time(executable, inputs):
    """(best seconds, last outputs) over one call per input, each waited for with block_until_ready."""
    import jax

    best, outputs = float("inf"), None
    for value in inputs:
        start = time.perf_counter()
        outputs = jax.block_until_ready(executable(value))
        best = min(best, time.perf_counter() - start)
    return best, outputs


def bench_pgx(size: int, batch: int, repeats: int, komi: float) -> dict:
    import jax
    import jax.numpy as jnp
    import numpy as np
    import pgx

    env = pgx.make(f"go_{size}x{size}")
    del komi  # pgx's go_NxN environments use komi 7.5, the default here
    init, step = jax.vmap(env.init), jax.vmap(env.step)

    @jax.jit
    def run(key):
        init_key, key = jax.random.split(key)
        state = init(jax.random.split(init_key, batch))

        def body(carry):
            state, key, moves = carry
            key, sub = jax.random.split(key)
            logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
            action = jax.random.categorical(sub, logits, axis=-1)
            moves = moves + (~state.terminated).astype(jnp.int32)
            return step(state, action), key, moves

        state, _, moves = jax.lax.while_loop(lambda c: ~jnp.all(c[0].terminated), body,
                                             (state, key, jnp.zeros(batch, jnp.int32)))
        black_player = state._player_order[:, 0]  # pgx assigns colours to players at random
        return moves, state.rewards[jnp.arange(batch), black_player]

    compile_s, run = _compile(run, jax.random.PRNGKey(0))
    best, (moves, rewards) = _best_time(run, [jax.random.PRNGKey(seed) for seed in range(1, repeats + 1)])
    return playout_record("pgx", jax.devices()[0].platform, 1, size, batch, compile_s, best,
                          np.asarray(moves), np.asarray(rewards) > 0)


def bench_openspiel(size: int, seconds: float, komi: float) -> dict:
    import random

    import numpy as np
    import pyspiel

    game = pyspiel.load_game("go", {"board_size": size, "komi": komi})
    rng = random.Random(0)
    moves, black_wins = [], []
    start = time.perf_counter()
    while time.perf_counter() - start < seconds or not moves:
        state = game.new_initial_state()
        count = 0
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
            count += 1
        moves.append(count)
        black_wins.append(state.returns()[0] > 0)
    elapsed = time.perf_counter() - start
    return playout_record("openspiel", "cpu", 1, size, len(moves), 0.0, elapsed, np.array(moves),
                          np.array(black_wins))


def significant(value: float, digits: int = 4) -> float:
    """``value`` rounded to ``digits`` significant digits (ratios in the JSON lines)."""
    return float(f"{value:.{digits}g}")


def playout_record(system, device, devices, size, batch, compile_s, seconds, moves, black_wins) -> dict:
    """One JSON line of ``jaxgo bench playouts``: moves int [batch] per playout, black_wins bool [batch]."""
    return {
        "system": system,
        "device": device,
        "devices": devices,
        "size": size,
        "batch": int(batch),
        "compile_s": round(max(compile_s, 0.0), 3),
        "playouts_per_s": round(batch / seconds, 1),
        "moves_per_s": round(float(moves.sum()) / seconds, 1),
        "mean_moves": round(float(moves.mean()), 2),
        "black_win_rate": round(float(black_wins.mean()), 4),
    }


def run_playouts(args) -> list[dict]:
    from jaxgo.playouts.bench import libego
    from jaxgo.playouts.evaluator import resolve_backend
    from jaxgo.playouts.native.runner import default_threads

    peers = [p.strip().lower() for p in args.compare.split(",") if p.strip()]
    unknown = set(peers) - {"pgx", "openspiel", "libego"}
    if unknown:
        raise SystemExit(f"jaxgo bench: unknown peer(s) {sorted(unknown)}; choose from libego, pgx, openspiel")
    backends = list(dict.fromkeys(resolve_backend(b) for b in args.backend))
    threads = args.threads or sorted({1, default_threads()})
    engines = None
    if "libego" in peers:
        engines = libego.engines(args.libego_dir)
        if isinstance(engines, str):
            print(f"jaxgo bench: Libego skipped: {engines}", file=sys.stderr, flush=True)
            engines = None
    records = []

    def emit(record):
        records.append(record)
        print(json.dumps(record), flush=True)

    random_peers = [p for p in peers if p in ("pgx", "openspiel")]
    if random_peers and "light" not in args.policy:
        print(f"jaxgo bench: {', '.join(random_peers)} skipped: they play uniform random games, compared with "
              "--policy light only", file=sys.stderr, flush=True)
    for size in args.size:
        for policy in args.policy:
            if "native" in backends:
                native = []
                for batch in args.batch or [default_batch(size, "native", policy)]:
                    for count in threads:
                        native.append(_run_native(args, size, policy, batch, count, engines, emit))
                if "xla" not in backends and policy == "light" and random_peers:
                    _compare_random_peers(args, size, max(native, key=lambda r: r["playouts_per_s"]),
                                          random_peers, emit)
            if "xla" in backends:
                _run_xla(args, size, policy, peers, emit)
    return records


def _run_native(args, size: int, policy: str, batch: int, threads: int, engines, emit) -> dict:
    """Native lines of one configuration: ``--repeats`` runs interleaved with Libego's (when compared), the best
    of each, and their ratio (one thread: by CPU time, as Libego reports)."""
    from jaxgo.playouts.bench import libego

    peer_runs, ours = [], None
    for _ in range(args.repeats):
        record = bench_native(size, batch, args.komi, policy, threads)
        if ours is None or record["playouts_per_s"] > ours["playouts_per_s"]:
            ours = record
        if engines is not None and size in engines:
            peer_runs.append(libego.benchmark(engines[size], policy, libego.playouts_for(size, policy), threads))
    emit(ours)
    _emit_libego(peer_runs, ours, size, policy, threads, emit)
    return ours


def _emit_libego(peer_runs, ours, size: int, policy: str, threads: int, emit) -> None:
    if peer_runs:
        peer = max(peer_runs, key=lambda r: r["playouts_per_s"])
        emit(peer)
        rate = ours["cpu_playouts_per_s"] if threads == 1 else ours["playouts_per_s"]
        emit({"system": "ratio", "size": size, "policy": policy, "threads": threads, "jaxgo_playouts_per_s": rate,
              "libego_playouts_per_s": peer["playouts_per_s"],
              "ratio_vs_libego": significant(rate / peer["playouts_per_s"])})


def _run_xla(args, size: int, policy: str, peers: list, emit) -> None:
    """XLA lines of one size and policy, with the pgx / OpenSpiel comparison for light playouts."""
    batches = args.batch or [default_batch(size)]
    kernels = args.light_kernel if policy == "light" else ["auto"]
    refills = args.refill_every if policy == "light" else [None]
    ours = [bench_jaxgo(size, b, args.repeats, args.komi, args.devices, lanes, policy, kernel, refill)
            for kernel in kernels for b in batches for lanes in args.lanes for refill in refills]
    for record in ours:
        emit(record)
    best = max(ours, key=lambda r: r["playouts_per_s"])
    xla_peers = [p for p in peers if p in ("pgx", "openspiel")] if policy == "light" else []
    _compare_random_peers(args, size, best, xla_peers, emit)


def _compare_random_peers(args, size: int, best: dict, xla_peers: list, emit) -> None:
    """pgx / OpenSpiel lines for ``size`` and a ratio line against ``best`` (a jaxgo line: XLA or native)."""
    ratio = {"system": "ratio", "size": size, "jaxgo_backend": best.get("backend", "xla"),
             "jaxgo_batch": best["batch"], "jaxgo_devices": best["devices"],
             "jaxgo_playouts_per_s": best["playouts_per_s"]}
    if "pgx" in xla_peers:
        peer = bench_pgx(size, min(best["batch"], args.pgx_batch), args.repeats, args.komi)
        emit(peer)
        ratio["pgx_batch"] = peer["batch"]
        ratio["ratio_vs_pgx"] = significant(best["playouts_per_s"] / peer["playouts_per_s"])
    if "openspiel" in xla_peers:
        peer = bench_openspiel(size, args.openspiel_seconds, args.komi)
        emit(peer)
        ratio["ratio_vs_openspiel"] = significant(best["playouts_per_s"] / peer["playouts_per_s"])
    if xla_peers:
        emit(ratio)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if "xla" in args.backend or "auto" in args.backend:
        configure_host_devices(args.devices)
    records = run_playouts(args)
    if not args.json:
        _print_table(records)
    return 0


def _print_table(records) -> None:
    rows = [r for r in records if r["system"] != "ratio"]
    print("\nsystem   backend policy     thr size  batch  compile_s  playouts/s    moves/s  mean_moves  black_win",
          file=sys.stderr)
    for r in rows:
        print(f"{r['system']:<8} {r.get('backend', ''):<7} {r.get('policy', ''):<10} {r.get('threads', ''):>3} "
              f"{r['size']:>4} {r['batch']:>6} {r['compile_s']:>10.2f} {r['playouts_per_s']:>11.1f} "
              f"{r['moves_per_s']:>10.0f} {r['mean_moves']:>11.1f} {r['black_win_rate']:>10.3f}", file=sys.stderr)
    for r in records:
        if r["system"] == "ratio":
            parts = [f"{k}={v}" for k, v in r.items() if k.startswith("ratio_")]
            what = f"{r.get('policy', 'light')}, {r.get('threads', '')} thread(s)" if "threads" in r else "xla"
            print(f"{r['size']}x{r['size']} ({what}): jaxgo {r['jaxgo_playouts_per_s']}/s  " + "  ".join(parts),
                  file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
