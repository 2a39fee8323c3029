"""``jaxgo gammas``: extract training shards, train gammas (MM, LMP, Adam), evaluate move prediction.

    jaxgo gammas harvest --out PATTERNS.npz [--split ... | --games-path PATH] [--games N] [--min-count C]
    jaxgo gammas extract --out SHARDS [--split train|kgs2017|fox | --games-path PATH] [--games N]
                         [--large PATTERNS.npz]
    jaxgo gammas train --shards SHARDS --method {mm,lmp,sgd} --out FILE [--checkpoint DIR] [--passes N]
                       [--iterations N] [--batch B] [--lr LR] [--devices N]
    jaxgo gammas eval [--gammas FILE|large|base] --games PATH [--limit N] [--pro-only] [--json] [--curve]

``eval`` prints one JSON object (top1, top5, mean_log_likelihood, positions, games, skipped); errors are
printed as {"error": ...} with exit status 1 (with --json) or as a message on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys


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
    add_sources(ex)

    tr = sub.add_parser("train", help="fit gammas on shards (resumes from --checkpoint)")
    tr.add_argument("--shards", required=True)
    tr.add_argument("--method", choices=["mm", "lmp", "sgd"], default="lmp")
    tr.add_argument("--out", required=True, help="gamma file to write (.npz)")
    tr.add_argument("--checkpoint", default=None, help="checkpoint folder (default: OUT.ckpt)")
    tr.add_argument("--passes", type=int, default=1, help="LMP / SGD passes over the data (a checkpoint of the same run continues to more passes; LMP needs >= 2 in the first run)")
    tr.add_argument("--iterations", type=int, default=20, help="MM sweeps")
    tr.add_argument("--batch", type=int, default=256, help="positions per batch")
    tr.add_argument("--lr", type=float, default=0.05, help="Adam learning rate (sgd)")
    tr.add_argument("--devices", type=int, default=None, help="split batches over this many devices")
    tr.add_argument("--quiet", action="store_true")

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
    print(json.dumps(summary))
    return 0


def _extract(args) -> int:
    from jaxgo.learn.shards import extract
    from jaxgo.features.large import LargeDictionary

    large = LargeDictionary.load(args.large) if args.large else None
    manifest = extract(args.out, _sources(args), games=args.games, shard_games=args.shard_games,
                       pro_only=args.split == "fox" and not args.games_path, batch=args.batch,
                       progress=not args.no_progress, size=args.size, large=large)
    print(json.dumps({"shards": len(manifest["shards"]), "games": sum(s["games"] for s in manifest["shards"]),
                      "positions": sum(s["positions"] for s in manifest["shards"]),
                      "skipped": manifest["skipped"], "complete": manifest["complete"]}))
    return 0


def _train(args) -> int:
    from jaxgo.learn.train import train

    checkpoint = args.checkpoint or (args.out + ".ckpt")
    log = None if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    summary = train(args.shards, args.method, args.out, checkpoint=checkpoint, passes=args.passes,
                    iterations=args.iterations, batch=args.batch, lr=args.lr, devices=args.devices, log=log)
    print(json.dumps(summary))
    return 0


def _eval(args) -> int:
    from jaxgo.features import gammas as gm
    from jaxgo.learn.evaluate import evaluate

    g = gm.load_named(args.gammas)
    result = evaluate(g, args.games, limit=args.limit, pro_only=args.pro_only, curve=args.curve, size=args.size)
    result["gammas"] = args.gammas or "large"
    print(json.dumps(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
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
