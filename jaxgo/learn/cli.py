"""``jaxgo gammas``: extract training shards, train gammas (MM, LMP, Adam), evaluate move prediction.

    jaxgo gammas harvest --out PATTERNS.npz [--split ... | --games-path PATH] [--games N] [--min-count C]
    jaxgo gammas extract --out SHARDS [--split train|kgs2017|fox | --games-path PATH] [--games N]
                         [--large PATTERNS.npz] [--workers N [--worker I]]
    jaxgo gammas train --shards SHARDS --method {mm,lmp,sgd} --out FILE [--checkpoint DIR] [--passes N]
                       [--iterations N] [--batch B] [--lr LR] [--devices N]
                       [--coordinator HOST:PORT --num-processes N --process-id I | --distributed]
    jaxgo gammas eval [--gammas FILE|large|base] --games PATH [--limit N] [--pro-only] [--json] [--curve]

``extract --workers N`` starts N worker processes on this host, each extracting every N-th shard (the files are
those of one process), and writes the manifest when all are done; ``--workers N --worker I`` runs worker I only
(one per host on a shared folder: the last one to finish writes the manifest).  ``train`` with ``--coordinator``
(or ``JAX_COORDINATOR_ADDRESS``, or ``--distributed`` inside a Slurm / Open MPI / Kubernetes job) is one process
of a ``jax.distributed`` run: start the same command once per process; ``--devices`` then splits each
process's CPU.

A damaged archive (cut, corrupt, failed CRC) is read up to its damage point and the job goes on: ``extract``,
``harvest`` and ``eval`` report it in ``damaged`` (and on stderr) and ``extract`` never reports ``complete``
over it.  ``eval`` prints one JSON object (top1, top5, mean_log_likelihood, positions, games, skipped, cut_games,
complete, damaged); errors are
printed as {"error": ...} with exit status 1 (with --json) or as a message on stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from jaxgo.util.args import at_least

MAX_LR = 10.0  # an Adam step this large already sends every gamma to infinity


def _learning_rate(text: str) -> float:
    value = float(text)
    if not (math.isfinite(value) and 0 < value <= MAX_LR):
        raise argparse.ArgumentTypeError(f"must be a number in (0, {MAX_LR:g}], got {text}")
    return value


def json_line(obj) -> str:
    """``obj`` as one line of strict JSON: a NaN or infinite number becomes null (never a bare ``NaN``)."""
    def clean(x):
        if isinstance(x, float) and not math.isfinite(x):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x
    return json.dumps(clean(obj), allow_nan=False)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jaxgo gammas", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    def add_sources(p):
        src = p.add_mutually_exclusive_group()
        src.add_argument("--split", choices=["train", "kgs2017", "fox"], default="train",
                         help="archives of the data root (fox: pro-vs-pro even games only)")
        src.add_argument("--games-path", nargs="+", help="tar.gz archives / SGF folders instead of a split")
        p.add_argument("--data", default=None,
                       help="data root (default: $JAXGO_DATA, else ../shared/data beside the checkout)")
        p.add_argument("--games", type=int, default=None, help="games in all (default: every game)")
        p.add_argument("--batch", type=int, default=16, help="games per vmapped call")
        p.add_argument("--size", type=int, default=19, help="board size of the games kept")
        p.add_argument("--no-progress", action="store_true")

    hv = sub.add_parser("harvest", help="dictionary of the large patterns played at least --min-count times")
    hv.add_argument("--out", required=True, help="dictionary file to write (.npz)")
    hv.add_argument("--min-count", type=int, default=10)
    add_sources(hv)
    ex = sub.add_parser("extract", help="write training shards (resumable: re-running skips finished shards)")
    ex.add_argument("--out", required=True, help="shard folder (manifest.json + .npy files)")
    ex.add_argument("--shard-games", type=int, default=250)
    ex.add_argument("--large", default=None, help="large-pattern dictionary (jaxgo gammas harvest) to add")
    ex.add_argument("--workers", type=int, default=1, help="worker processes, each extracting every N-th shard")
    ex.add_argument("--worker", type=int, default=None,
                    help="run only this worker (0..N-1) of --workers N, e.g. one per host on a shared folder")
    ex.add_argument("--cores", default="", help=argparse.SUPPRESS)  # a worker's share of the host's cores
    add_sources(ex)

    tr = sub.add_parser("train", help="fit gammas on shards (resumes from --checkpoint)")
    tr.add_argument("--shards", required=True)
    tr.add_argument("--method", choices=["mm", "lmp", "sgd"], default="lmp")
    tr.add_argument("--out", required=True, help="gamma file to write (.npz)")
    tr.add_argument("--checkpoint", default=None, help="checkpoint folder (default: OUT.ckpt)")
    tr.add_argument("--passes", type=at_least(1), default=1,
                    help="LMP / SGD passes over the data, at least 1 (a checkpoint of the same run continues to "
                         "more passes; an LMP run continued so must have had >= 2 passes: one pass keeps no "
                         "per-batch factors)")
    tr.add_argument("--iterations", type=at_least(1), default=20, help="MM sweeps, at least 1")
    tr.add_argument("--batch", type=at_least(1), default=256, help="positions per batch, at least 1")
    tr.add_argument("--lr", type=_learning_rate, default=0.05,
                    help=f"Adam learning rate (sgd), finite, in (0, {MAX_LR:g}]")
    tr.add_argument("--devices", type=int, default=None,
                    help="split batches over this many devices (several processes: CPU devices per process)")
    tr.add_argument("--quiet", action="store_true")
    dist = tr.add_argument_group("several processes (jax.distributed; start the same command in each)")
    dist.add_argument("--coordinator", default=None,
                      help="HOST:PORT of process 0 (default: $JAX_COORDINATOR_ADDRESS)")
    dist.add_argument("--num-processes", type=int, default=None, help="processes in all")
    dist.add_argument("--process-id", type=int, default=None, help="this process (0 = the coordinator)")
    dist.add_argument("--distributed", action="store_true",
                      help="join a multi-process run described by the cluster environment (Slurm, Open MPI, "
                           "Kubernetes, as jax.distributed detects it)")
    dist.add_argument("--init-timeout", type=int, default=300,
                      help="seconds to wait for every process to join")
    dist.add_argument("--heartbeat-timeout", type=int, default=60,
                      help="seconds without news after which a process is declared dead and the others stop")

    ev = sub.add_parser("eval", help="top-1/top-5/log-likelihood of gammas on game records")
    ev.add_argument("--gammas", default=None,
                    help="gamma file, or 'large' (default: the shipped model with large patterns) or 'base' (the "
                         "shipped 3x3 + tactical model that playouts and priors use)")
    ev.add_argument("--games", required=True, help="SGF file, folder of SGF files or tar.gz archive")
    ev.add_argument("--limit", type=int, default=None, help="at most this many games")
    ev.add_argument("--pro-only", action="store_true", help="keep pro-vs-pro even games only (Fox archive)")
    ev.add_argument("--curve", action="store_true", help="add accuracy by move number (20-move buckets)")
    ev.add_argument("--size", type=int, default=19, help="board size of the games kept (others are skipped)")
    ev.add_argument("--json", action="store_true", help="errors as a JSON object too")
    return parser


def _sources(args):
    from jaxgo.data import heldout_archives, train_archives
    from jaxgo.util.paths import data_dir

    root = args.data or data_dir()
    if args.games_path:
        sources = args.games_path
    elif args.split == "train":
        sources = train_archives(root)
    else:
        sources = heldout_archives(root, args.split)
    if not sources:
        raise FileNotFoundError(f"no archives found under {root}")
    return sources


def _harvest(args) -> int:
    from jaxgo.learn.patterns import harvest

    dictionary, summary = harvest(_sources(args), games=args.games, min_count=args.min_count,
                                  pro_only=args.split == "fox" and not args.games_path, batch=args.batch,
                                  progress=not args.no_progress, size=args.size)
    dictionary.save(args.out)
    _warn_damaged(summary["damaged"])
    print(json.dumps(summary))
    return 0


def _extract(args) -> int:
    from jaxgo.features.large import LargeDictionary
    from jaxgo.learn.shards import extract

    if args.workers < 1 or (args.worker is not None and not 0 <= args.worker < args.workers):
        raise ValueError(f"--worker must be in 0..{args.workers - 1} (--workers {args.workers})")
    if args.workers > 1 and args.worker is None:
        return _extract_workers(args)
    large = LargeDictionary.load(args.large) if args.large else None
    kwargs = dict(games=args.games, shard_games=args.shard_games, batch=args.batch, size=args.size, large=large,
                  pro_only=args.split == "fox" and not args.games_path)
    if args.worker is None:
        manifest = extract(args.out, _sources(args), progress=not args.no_progress, **kwargs)
    else:
        from jaxgo.learn.shards import extract_worker, merge_workers

        log = None if args.no_progress else (lambda msg: print(msg, file=sys.stderr, flush=True))
        record = extract_worker(args.out, _sources(args), worker=args.worker, workers=args.workers, log=log,
                                **kwargs)
        manifest = merge_workers(args.out, args.workers) if not record.get("merged") else _manifest(args.out)
        if manifest is None:
            print(json.dumps({"worker": args.worker, "workers": args.workers, "shards_written":
                              len(record["shards"]), "done": record["done"], "manifest": False}))
            return 0
    print(json.dumps(_extract_summary(manifest)))
    return 0


def _manifest(folder):
    from jaxgo.learn.shards import read_manifest

    return read_manifest(folder)


def _extract_summary(manifest: dict) -> dict:
    """The JSON line ``extract`` prints: shards, games, positions, skipped, cut_games (used only up to an illegal
    move), complete, damaged (archives read only up to a damage point: ``jaxgo.data.ArchiveDamage``; each is also
    reported on stderr)."""
    damaged = manifest.get("damaged", [])
    _warn_damaged(damaged)
    return {"shards": len(manifest["shards"]), "games": sum(s["games"] for s in manifest["shards"]),
            "positions": sum(s["positions"] for s in manifest["shards"]), "skipped": manifest["skipped"],
            "cut_games": sum(s.get("cut_games", 0) for s in manifest["shards"]),
            "complete": manifest["complete"], "damaged": damaged}


def _warn_damaged(damaged: list) -> None:
    """One line on stderr per damaged archive (the job went on with the records read before the damage)."""
    from jaxgo.data import ArchiveDamage

    for entry in damaged:
        print(f"jaxgo gammas: damaged archive {ArchiveDamage(**entry).describe()}", file=sys.stderr)


def _extract_workers(args) -> int:
    """``extract --workers N``: N child processes ``extract ... --worker I`` on this host, each pinned to its share
    of the cores, then one manifest.  A failed worker leaves its finished shards: re-running resumes."""
    import subprocess
    import time

    from jaxgo.learn.shards import merge_workers, worker_file
    from jaxgo.util.distributed import core_shares, format_cores

    argv = [a for a in args.argv if a != "--no-progress"]
    children = []
    for worker, cores in enumerate(core_shares(args.workers)):
        cmd = [sys.executable, "-m", "jaxgo.learn.cli", *argv, "--worker", str(worker), "--no-progress",
               "--cores", format_cores(cores)]
        children.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL))
    bar = None
    if not args.no_progress:
        from tqdm import tqdm
        bar = tqdm(unit="shard", desc=f"extract ({args.workers} workers)")
    while any(c.poll() is None for c in children):
        time.sleep(1.0)
        if bar is not None:
            bar.n = sum(_shards_in(worker_file(args.out, w, args.workers)) for w in range(args.workers))
            bar.refresh()
    if bar is not None:
        bar.close()
    failed = [w for w, c in enumerate(children) if c.returncode != 0]
    if failed:
        raise ValueError(f"extraction workers {failed} failed (their stderr is above); re-run the same command "
                         "to resume")
    manifest = merge_workers(args.out, args.workers) or _manifest(args.out)
    print(json.dumps(_extract_summary(manifest)))
    return 0


def _shards_in(path) -> int:
    """Shards listed in a worker record (0 if it is missing or being replaced)."""
    try:
        return len(json.loads(path.read_text())["shards"])
    except (OSError, ValueError, KeyError):
        return 0


def _train(args) -> int:
    from jaxgo.learn.train import train
    from jaxgo.util import distributed

    checkpoint = args.checkpoint or (args.out + ".ckpt")
    log = None if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    run = dict(checkpoint=checkpoint, passes=args.passes, iterations=args.iterations, batch=args.batch, lr=args.lr,
               log=log)
    if not distributed.wanted(args.coordinator, args.num_processes, args.process_id, args.distributed):
        print(json_line(train(args.shards, args.method, args.out, devices=args.devices, **run)))
        return 0
    cluster = distributed.initialize(args.coordinator, args.num_processes, args.process_id,
                                     init_timeout=args.init_timeout, heartbeat_timeout=args.heartbeat_timeout,
                                     log=log)
    try:
        summary = train(args.shards, args.method, args.out, **run)
    except BaseException as exc:  # a process must not wait at exit for peers that are gone: leave now
        where = f"jaxgo gammas train: process {cluster.process_id}/{cluster.num_processes}"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if distributed.peer_lost(exc):
            distributed.fail(f"{where}: another process stopped ({first}). Start all {cluster.num_processes} "
                             f"processes again with the same command: they resume from the last checkpoint in "
                             f"{checkpoint}")
        distributed.fail(f"{where}: {first}")
    if cluster.is_writer:
        print(json_line(summary), flush=True)
    distributed.shutdown()
    return 0


def _eval(args) -> int:
    from jaxgo.features import gammas as gm
    from jaxgo.learn.evaluate import evaluate

    g = gm.load_named(args.gammas)
    result = evaluate(g, args.games, limit=args.limit, pro_only=args.pro_only, curve=args.curve, size=args.size)
    result["gammas"] = args.gammas or "large"
    _warn_damaged(result.get("damaged", []))
    print(json.dumps(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    args.argv = argv
    if getattr(args, "cores", ""):  # before jax starts: XLA sizes its thread pool from the allowed cores
        from jaxgo.util.distributed import pin_cores

        pin_cores(args.cores)
    if getattr(args, "devices", None):  # several CPU devices must be asked for before jax starts
        from jaxgo.util.devices import configure_host_devices

        configure_host_devices(args.devices)
    try:
        return {"harvest": _harvest, "extract": _extract, "train": _train, "eval": _eval}[args.command](args)
    except (ValueError, FileNotFoundError, OSError) as exc:
        if getattr(args, "json", False):
            print(json.dumps({"error": str(exc)}))
        else:
            print(f"jaxgo gammas {args.command}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
