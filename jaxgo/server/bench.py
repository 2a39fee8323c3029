"""``jaxgo bench serve``: aggregate analysis throughput of one server with 1, 8, 32 ... concurrent clients.

For each client count C, an in-process server (TCP on 127.0.0.1) is driven by C client threads; each sends
``--queries`` queries one after another (``--visits`` playouts each, the same opening position) and waits
for each answer.  Printed per C (one JSON line): aggregate playouts/s over the timed run, p50/p99 query
latency, device calls and mean leaves per call.  Then the raw batched playout throughput of the light-playout
Evaluator (one ``playout.run`` call, or its sharded form with ``--devices``) on the same position at the same
padded batch (leaves x L; mean over ``--repeats`` calls, best also shown), and the ratio server / raw (the
issue's target: >= 0.8 with 32 clients).  A warm-up pass compiles every shape first, so no compile time is counted.

``--devices 1 2 --device-batch B`` measures one server per device count, each in its own process (a CPU host
is split into N XLA devices before JAX starts; a GPU host uses its first N GPUs): every device call holds up to
B leaves sharded over the N devices, and each line gives ``devices``, ``device_batch``, ``playouts_per_s`` and
``queries_per_s``; the raw figure is the same sharded evaluator at the same padded batch.

``--host-only`` swaps the playouts for ones that cost nothing (``InstantPlayouts``): the line then gives the
throughput the host's tree work allows, the most the server can reach on any device (``--tree-threads`` N to
compare thread counts).

On a machine shared with other jobs the raw figure (a few short calls) and the server figure
(one long run) see different load; ``busy_x_fill`` (share of wall time inside device calls x share of real
leaves in the padded batches) is the same ratio estimated inside the run, insensitive to outside load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np

from jaxgo.search.config import SearchConfig
from jaxgo.server import host_cost
from jaxgo.server.instant import InstantPlayouts


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="jaxgo bench serve", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32], help="client counts (default 1 8 32)")
    parser.add_argument("--size", type=int, default=9, help="board size (default 9)")
    parser.add_argument("--visits", type=int, default=512, help="maxVisits (playouts) per query (default 512)")
    parser.add_argument("--queries", type=int, default=3, help="queries per client (default 3)")
    parser.add_argument("--leaves", type=int, default=64, help="K, leaves per search per round (default 64)")
    parser.add_argument("--playouts-per-leaf", type=int, default=4, help="L (default 4)")
    parser.add_argument("--device-batch", "--max-boards", dest="max_boards", type=int, default=4096, metavar="B",
                        help="most leaves per device call (default 4096; --max-boards is its older name)")
    parser.add_argument("--devices", type=int, nargs="+", default=None, metavar="N",
                        help="device counts to shard each call over, one process each (default: 1, in this "
                             "process)")
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)  # a --devices child
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed raw playout calls (their mean is the ratio's reference; the best is shown)")
    parser.add_argument("--host-only", action="store_true",
                        help="playouts that cost nothing (``InstantPlayouts``: fixed random results at once): the "
                             "throughput the host's tree work allows, the ceiling of the server on any device")
    parser.add_argument("--tree-threads", type=int, default=0,
                        help="threads for the searches' tree work (default 0: the server's own choice)")
    parser.add_argument("--no-overlap", action="store_true",
                        help="one wave per round (no host/device overlap), for comparison")
    parser.add_argument("--per-search-rounds", action="store_true",
                        help="each search's leaves selected and backed up by its own calls (one RoundStep per "
                             "search), not one call per wave over all searches, for comparison")
    parser.add_argument("--memory", action="store_true",
                        help="measure the resident memory instead (one line; batch = --leaves x "
                             "--playouts-per-leaf boards per device call): idle, "
                             "during a 10,000,000-visit query stopped by --seconds, after it, and during the "
                             "largest accepted query (1,500 passes, every turn analysed, 8 visits)")
    parser.add_argument("--seconds", type=float, default=20.0, help="maxTime of the --memory long query")
    parser.add_argument("--first-analysis", action="store_true",
                        help="time a fresh `jaxgo serve` process instead: start to the first answer on --size "
                             "boards, a second answer, then the first and second after a change to --other-size "
                             "(one line; jaxgo.server.probes)")
    parser.add_argument("--other-size", type=int, default=9, help="the board size changed to (default 9)")
    parser.add_argument("--flood", type=int, default=None, metavar="QUERIES",
                        help="time 16-visit queries of one client while another sends QUERIES KaTrain-like "
                             "queries (reports every 0.01 s) and never reads its replies (one line)")
    parser.add_argument("--soak", type=float, default=None, metavar="MINUTES",
                        help="mixed load on a `jaxgo serve` process for MINUTES; prints the answers, errors, lost "
                             "queries and the resident memory's slope after warm-up, in MB per 10 minutes")
    parser.add_argument("--soak-clients", type=int, default=8, help="concurrent clients of --soak (default 8)")
    parser.add_argument("--serve-option", action="append", default=[], metavar="OPTION",
                        help="an option for the `jaxgo serve` process of --first-analysis/--flood/--soak "
                             "(repeatable; e.g. --serve-option=--backend=xla)")
    parser.add_argument("--tree-mb", type=float, default=None,
                        help="tree memory per search for --memory (default: the engine's max_tree_mb)")
    return parser.parse_args(argv)


def resident_mb() -> float:
    """This process's resident memory (VmRSS) in MB."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class PeakSampler:
    """Samples ``resident_mb`` every 50 ms on a thread; ``stop()`` returns the peak."""

    def __init__(self):
        self.peak = resident_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="rss-sampler")
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, resident_mb())

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return max(self.peak, resident_mb())


def memory_footprint(args, size: int, max_boards: int) -> dict:
    """Resident memory of one in-process engine on ``size`` boards at ``max_boards`` leaves per call."""
    from jaxgo.server.client import LocalConnection
    from jaxgo.server.engine import AnalysisEngine
    from jaxgo.server.engine_config import EngineConfig, default_buckets
    from jaxgo.server.protocol import MAX_QUERY_MOVES
    from jaxgo.server.tasks import tree_bytes_per_node

    search = SearchConfig(playout_policy="light", bias_c2=0.0, leaves_per_batch=args.leaves,
                          playouts_per_leaf=args.playouts_per_leaf)
    config = EngineConfig(search=search, max_boards=max_boards, buckets=default_buckets(max_boards),
                          overlap=not args.no_overlap)
    if args.tree_mb is not None:
        config.max_tree_mb = args.tree_mb
    engine = AnalysisEngine(config, make_evaluator=InstantPlayouts if args.host_only else None).start()
    conn = LocalConnection(engine)
    base = {"id": "m", "moves": [["B", "pass"]], "rules": "chinese", "komi": 7.5, "boardXSize": size,
            "boardYSize": size}
    try:
        conn.query({**base, "id": "warm", "maxVisits": 256}).results(1200)  # compiles the shapes
        idle = resident_mb()
        sampler = PeakSampler()
        began = time.perf_counter()
        stream = conn.query({**base, "id": "long", "maxVisits": 10_000_000, "maxTime": args.seconds})
        responses = _until_final(stream, args.seconds + 1200)
        final = responses[-1]
        seconds = time.perf_counter() - began
        peak = sampler.stop()
        warnings = [r for r in responses if "warning" in r and r.get("field") == "maxVisits"]
        after = resident_mb()
        sampler = PeakSampler()
        many = {**base, "id": "many", "moves": [["B" if k % 2 == 0 else "W", "pass"] for k in range(MAX_QUERY_MOVES)],
                "analyzeTurns": list(range(MAX_QUERY_MOVES + 1)), "maxVisits": 8,
                "overrideSettings": {"leaves_per_batch": None}}  # K from the 8-visit budget, not --leaves
        turns = len(conn.query(many).results(3600))
        many_peak = sampler.stop()
    finally:
        conn.close()
        engine.stop(wait=False, timeout=30)
    return {
        "system": "jaxgo-serve-memory", "size": size, "max_boards": max_boards, "leaves_per_search": args.leaves,
        "playouts_per_leaf": args.playouts_per_leaf, "boards_per_call": args.leaves * args.playouts_per_leaf,
        "tree_bytes_per_node": tree_bytes_per_node(size),
        "max_tree_mb": config.max_tree_mb, "rss_idle_mb": round(idle, 1),
        "long_query_s": round(seconds, 1), "long_query_visits": final.get("rootInfo", {}).get("visits"),
        "tree_capped": bool(warnings), "rss_peak_long_mb": round(peak, 1), "rss_after_mb": round(after, 1),
        "many_turns_answered": turns, "rss_peak_many_turns_mb": round(many_peak, 1),
    }


def _until_final(stream, timeout: float) -> list:
    """Every response of a one-turn query (warnings included) up to its final one."""
    out = []
    while not out or not ("turnNumber" in out[-1] and not out[-1].get("isDuringSearch")):
        out.append(stream.get(timeout))
        if "error" in out[-1]:
            raise RuntimeError(f"benchmark query failed: {out[-1]}")
    return out


def _query(ident: str, size: int, visits: int) -> dict:
    centre = "ABCDEFGHJKLMNOPQRST"[size // 2] + str(size // 2 + 1)
    return {"id": ident, "moves": [["B", centre]], "rules": "chinese", "komi": 7.5, "boardXSize": size,
            "boardYSize": size, "maxVisits": visits}


def _percentile(values, q):

    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def run_clients(address: str, clients: int, queries: int, size: int, visits: int) -> tuple[float, list[float]]:
    """(wall seconds, per-query latencies) for ``clients`` threads each sending ``queries`` queries in turn."""
    from jaxgo.server.client import ServerClient

    latencies, errors = [], []
    lock = threading.Lock()
    start_gate = threading.Barrier(clients + 1)

    def one(index):
        try:
            conn = ServerClient(address)
        except Exception as exc:
            errors.append(repr(exc))
            conn = None
        start_gate.wait()
        if conn is None:
            return
        try:
            for k in range(queries):
                began = time.perf_counter()
                results = conn.query(_query(f"b{index}-{k}", size, visits)).results(timeout=1200)
                took = time.perf_counter() - began
                if not results or "error" in results[0]:
                    errors.append(results)
                with lock:
                    latencies.append(took)
        except Exception as exc:  # a refused or broken connection fails the run, not just this thread
            errors.append(repr(exc))
        finally:
            conn.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    start_gate.wait()
    began = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - began
    if errors:
        raise RuntimeError(f"benchmark queries failed: {errors[:2]}")
    return wall, latencies


def raw_throughput(size: int, boards: int, lpl: int, repeats: int, devices: int = 1) -> tuple[float, float]:
    """(best, mean) light-playout playouts/s of the Evaluator (sharded over ``devices``) from the benchmark
    position at ``boards`` x ``lpl`` playouts per call over ``repeats`` calls."""
    import jax

    from jaxgo.go.game import new_game
    from jaxgo.playouts.evaluator import make_evaluator
    from jaxgo.search.tree import stack_state

    game = new_game(size)
    game.play(1, (size - 1 - size // 2) * size + size // 2)
    states = stack_state(game.state, boards)
    evaluator = make_evaluator("light", None, devices)
    evaluator.dispatch(states, jax.random.PRNGKey(0), lpl, 7.5).ready()
    times = []
    for seed in range(1, repeats + 1):
        began = time.perf_counter()
        evaluator.dispatch(states, jax.random.PRNGKey(seed), lpl, 7.5).ready()
        times.append(time.perf_counter() - began)
    return boards * lpl / min(times), boards * lpl * len(times) / sum(times)


def child_argv(args, devices: int) -> list[str]:
    """The ``jaxgo bench serve`` arguments of the process that measures ``devices`` devices."""
    argv = ["--clients", *map(str, args.clients), "--size", str(args.size), "--visits", str(args.visits),
            "--queries", str(args.queries), "--leaves", str(args.leaves), "--playouts-per-leaf",
            str(args.playouts_per_leaf), "--device-batch", str(args.max_boards), "--repeats", str(args.repeats),
            "--devices", str(devices), "--in-process"]
    return (argv + (["--no-overlap"] if args.no_overlap else []) + (["--host-only"] if args.host_only else [])
            + (["--per-search-rounds"] if args.per_search_rounds else []) + ["--tree-threads", str(args.tree_threads)])


def run_device_counts(args) -> int:
    """One child process per ``--devices`` count (the device split must precede JAX start-up); their JSON
    lines are printed as they come.  Non-zero when a child fails."""
    for devices in args.devices:
        command = [sys.executable, "-m", "jaxgo", "bench", "serve", *child_argv(args, devices)]
        proc = subprocess.run(command, stdout=subprocess.PIPE, text=True)
        sys.stdout.write(proc.stdout)
        sys.stdout.flush()
        if proc.returncode != 0:
            print(f"jaxgo bench serve: the --devices {devices} run failed (exit status {proc.returncode})",
                  file=sys.stderr)
            return proc.returncode
    return 0


def run_probe(args) -> int:
    """``--first-analysis``, ``--flood`` or ``--soak``: one JSON line from ``jaxgo.server.probes``."""
    import tempfile

    from jaxgo.server import probes

    extra = list(args.serve_option)
    if args.first_analysis:
        record = probes.first_analysis(args.size, args.other_size, args.visits, extra)
    elif args.flood is not None:
        with tempfile.TemporaryDirectory() as folder:
            record = probes.flood(args.size, args.flood, 2.0, extra, os.path.join(folder, "serve.log"))
    else:
        record = probes.soak(args.soak, args.soak_clients, extra)
    print(json.dumps(record), flush=True)
    return 0


def start_devices(devices: int) -> None:
    """Split a CPU host into ``devices`` XLA devices (before JAX starts) and check that JAX sees them."""
    from jaxgo.util.devices import configure_host_devices, visible_devices

    configure_host_devices(devices)
    visible_devices(devices)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.first_analysis or args.flood is not None or args.soak is not None:
        return run_probe(args)
    devices = 1
    if args.devices is not None:
        if args.memory or any(n < 1 for n in args.devices) or any(args.max_boards % n for n in args.devices):
            print("jaxgo bench serve: --devices takes positive counts that divide --device-batch, without --memory",
                  file=sys.stderr)
            return 2
        if not args.in_process:
            return run_device_counts(args)
        devices = args.devices[0]
        try:
            start_devices(devices)
        except ValueError as exc:
            print(f"jaxgo bench serve: {exc}", file=sys.stderr)
            return 2
    if args.memory:
        for size in [args.size]:
            print(json.dumps(memory_footprint(args, size, args.max_boards)), flush=True)
        return 0
    import jax

    from jaxgo.server.engine_config import EngineConfig, default_buckets

    search = SearchConfig(playout_policy="light", bias_c2=0.0, leaves_per_batch=args.leaves,
                          playouts_per_leaf=args.playouts_per_leaf)  # light playouts: comparable to the raw calls
    config = EngineConfig(search=search, max_boards=args.max_boards,
                          buckets=default_buckets(args.max_boards, devices), devices=devices,
                          overlap=not args.no_overlap, tree_threads=args.tree_threads,
                          compiled_rounds=not args.per_search_rounds)
    engine, server, address = start_server(config, args)
    device = jax.devices()[0].platform
    try:
        for clients in args.clients:
            run_clients(address, clients, 1, args.size, args.visits)  # warm-up: compiles this batch shape
            playouts0, calls0, device_s0 = engine.playouts, engine.device_calls, engine.device_seconds
            padded0 = engine.padded_leaves
            cost = host_cost.HostCost() if args.host_only else None
            wall, latencies = run_clients(address, clients, args.queries, args.size, args.visits)
            playouts = engine.playouts - playouts0
            costs = cost.figures(playouts // args.playouts_per_leaf) if cost is not None else {}
            calls = max(1, engine.device_calls - calls0)
            leaves_per_call = playouts / calls / args.playouts_per_leaf
            fill = playouts / args.playouts_per_leaf / max(1, engine.padded_leaves - padded0)
            busy = (engine.device_seconds - device_s0) / wall
            bucket = next((b for b in config.buckets if b >= leaves_per_call), config.buckets[-1])
            raw_best, raw = raw_throughput(args.size, bucket, args.playouts_per_leaf, args.repeats, devices)
            top = config.buckets[-1]  # the largest call the server may make: the device's best batch, if set so
            top_raw = raw if top == bucket else raw_throughput(args.size, top, args.playouts_per_leaf, args.repeats,
                                                               devices)[1]
            record = {
                "system": "jaxgo-serve", "device": device, "devices": devices, "device_batch": args.max_boards,
                "host_only": args.host_only, "tree_threads": engine.tree_threads,
                "overlap": config.overlap, "compiled_rounds": config.compiled_rounds, "size": args.size,
                "clients": clients,
                "queries": clients * args.queries, "visits": args.visits, "leaves_per_search": args.leaves,
                "playouts_per_leaf": args.playouts_per_leaf, "playouts_per_s": round(playouts / wall, 1),
                "queries_per_s": round(clients * args.queries / wall, 3),
                "latency_p50_s": round(_percentile(latencies, 50), 3),
                "latency_p99_s": round(_percentile(latencies, 99), 3),
                "device_calls": calls, "mean_leaves_per_call": round(leaves_per_call, 1),
                "device_busy": round(busy, 3), "batch_fill": round(fill, 3),
                "busy_x_fill": round(busy * fill, 3),
                "raw_batch_leaves": bucket, "raw_playouts_per_s": round(raw, 1),
                "raw_best_playouts_per_s": round(raw_best, 1), "ratio_vs_raw": round(playouts / wall / raw, 3),
                "raw_top_batch_leaves": top, "raw_top_playouts_per_s": round(top_raw, 1),
                "ratio_vs_raw_top": round(playouts / wall / top_raw, 3),
            }
            if cost is not None:
                record.update(costs)
                record["python_calls_per_leaf"] = host_cost.calls_per_leaf(
                    lambda: start_server(config, args), lambda pair: stop_server(*pair[:2]),
                    lambda address: run_clients(address, clients, 1, args.size, args.visits), args.playouts_per_leaf)
            print(json.dumps(record), flush=True)
    finally:
        stop_server(engine, server)
    return 0


def start_server(config, args) -> tuple:
    """(engine, TCP server, its address) of one in-process engine under ``config`` (the stand-in playouts with
    ``--host-only``)."""
    from jaxgo.server import transports
    from jaxgo.server.engine import AnalysisEngine

    engine = AnalysisEngine(config, make_evaluator=InstantPlayouts if args.host_only else None).start()
    server = transports.TcpServer(engine, 0, limits=transports.ConnectionLimits(max_connections=max(args.clients) + 8))
    transports.start_in_thread(server)
    return engine, server, f"tcp:127.0.0.1:{server.server_address[1]}"


def stop_server(engine, server) -> None:
    server.shutdown()
    server.server_close()
    engine.stop(wait=False, timeout=30)
