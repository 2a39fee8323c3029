"""``jaxgo gtp``: a Go Text Protocol (version 2) engine on stdin/stdout.

``jaxgo gtp [options]`` searches in this process; ``jaxgo gtp --server ADDR`` is the same engine whose
searches run in a ``jaxgo serve`` process (``tcp:HOST:PORT``, ``HOST:PORT``, ``PORT`` or ``unix:PATH``), so many
GTP sessions share one device.  Both take the search options of ``jaxgo.search.config.add_arguments`` (the
remote one sends them with every query) and exit 0 on ``quit`` or at the end of input.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from jaxgo.go.config import KO_RULES, Rules
from jaxgo.search import config as search_config
from jaxgo.search.player import DEFAULT_PLAYOUTS


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jaxgo gtp", description="Go Text Protocol (v2) engine on stdin/stdout")
    parser.add_argument("--size", type=int, default=19, help="board size (default %(default)s)")
    parser.add_argument("--komi", type=float, default=7.5, help="komi (default %(default)s)")
    parser.add_argument("--rules", choices=KO_RULES, default="positional", help="ko rule (default %(default)s)")
    parser.add_argument("--suicide", action="store_true", help="allow multi-stone suicide (default: forbidden)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the search's random choices (default: random)")
    parser.add_argument("--playouts", type=int, default=None,
                        help=f"playouts per move (default {DEFAULT_PLAYOUTS} unless --seconds or a GTP clock is set)")
    parser.add_argument("--seconds", type=float, default=None,
                        help="seconds per move (default: none; the GTP clock when set)")
    parser.add_argument("--quiet", action="store_true", help="no debug output on stderr")
    parser.add_argument("--server", default=None, metavar="ADDR",
                        help="thin front end: run searches in a `jaxgo serve` process (tcp:HOST:PORT or unix:PATH)")
    search_config.add_arguments(parser)
    return parser


def rules_from_args(args) -> Rules | None:
    """The Rules of the --size/--komi/--rules/--suicide options, or None after printing why they are invalid."""
    try:
        return Rules(size=args.size, komi=args.komi, ko_rule=args.rules, suicide=args.suicide)
    except ValueError as exc:
        print(f"jaxgo gtp: {exc}", file=sys.stderr)
        return None


def engine_from_args(args):
    """The GTP engine of parsed options (local, or on the ``--server`` connection); None after printing why
    it cannot be built."""
    from jaxgo.gtp.engine import make_gtp_engine, make_remote_gtp_engine

    rules = rules_from_args(args)
    if rules is None:
        return None
    try:
        config = search_config.from_args(args)
    except ValueError as exc:
        print(f"jaxgo gtp: {exc}", file=sys.stderr)
        return None
    seed = int(np.random.SeedSequence().entropy % (2 ** 31)) if args.seed is None else args.seed
    options = dict(seed=seed, log=None if args.quiet else sys.stderr, playouts=args.playouts,
                   seconds=args.seconds)
    if args.server is None:
        return make_gtp_engine(rules, config, **options)
    from jaxgo.server.client import ServerClient

    try:
        connection = ServerClient(args.server)
    except (OSError, ValueError) as exc:
        print(f"jaxgo gtp: cannot reach the server at {args.server}: {exc}", file=sys.stderr)
        return None
    try:
        return make_remote_gtp_engine(connection, rules, config, **options)
    except ValueError as exc:
        connection.close()
        print(f"jaxgo gtp: {exc}", file=sys.stderr)
        return None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    engine = engine_from_args(args)
    if engine is None:
        return 2
    # Reads bytes (a stray non-UTF-8 byte cannot end the session) and streams analysis commands
    # (lz-analyze, kata-analyze) until the next command arrives.
    from jaxgo.gtp.loop import serve

    return int(serve(engine, getattr(sys.stdin, "buffer", sys.stdin), sys.stdout) or 0)


if __name__ == "__main__":
    sys.exit(main())
