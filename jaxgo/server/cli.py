"""``jaxgo serve``: the batched analysis server (KataGo JSON-lines protocol)."""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from jaxgo.search import config as search_config
from jaxgo.server.engine import AnalysisEngine, EngineConfig, default_buckets
from jaxgo.server.protocol import PERSPECTIVES

EPILOG = """\
transports (any combination; with none of --tcp/--unix/--http the server reads stdin):
  stdin/stdout   one JSON query per line in, one JSON response per line out (KaTrain/KataGo style);
                 at end of input every queued query is answered, then the server exits
  --tcp PORT     many clients on 127.0.0.1:PORT (one JSON-lines session per connection)
  --unix PATH    many clients on a Unix socket
  --http PORT    web board on http://127.0.0.1:PORT/ (click to play or set up stones, live ownership,
                 win-rate graph of a loaded SGF); JSON API: GET /api/stream?q=QUERY (server-sent events),
                 POST /api/sgf (SGF text -> moves)

query (KataGo analysis engine format; one line):
  {"id":"q1","moves":[["B","E5"],["W","C3"]],"rules":"chinese","komi":7.5,"boardXSize":9,"boardYSize":9,
   "maxVisits":800,"analyzeTurns":[0,1,2],"includeOwnership":true,"reportDuringSearchEvery":0.5}
  other fields: initialStones, initialPlayer, includePolicy, includeTerritory (CRF expected territory),
  priority, analysisPVLen, overrideSettings (reportAnalysisWinratesAs, or any search option by its
  SearchConfig field name: {"playouts":"light","bias_c2":0}).  Actions: {"id":"v","action":"query_version"},
  {"id":"t","action":"terminate","terminateId":"q1"}, {"id":"t","action":"terminate_all"}.
  Errors come back as {"error":..., "field":..., "id":...}.  "visits" are playouts.

examples:
  echo '{"id":"a","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"maxVisits":200}' | jaxgo serve
  jaxgo serve --tcp 6464 --http 8080          # then: jaxgo gtp --server tcp:127.0.0.1:6464
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jaxgo serve", description=__doc__, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tcp", type=int, metavar="PORT", help="listen on 127.0.0.1:PORT")
    parser.add_argument("--host", default="127.0.0.1", help="address for --tcp/--http (default 127.0.0.1)")
    parser.add_argument("--unix", metavar="PATH", help="listen on a Unix socket")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve the web board on PORT")
    parser.add_argument("--stdin", action="store_true", help="also read queries from stdin when sockets are used")
    search_config.add_arguments(parser)
    parser.add_argument("--max-leaves-per-search", type=int, default=EngineConfig.max_leaves_per_search,
                        help="most leaves one search selects per round when --leaves is not set "
                             "(default %(default)s)")
    parser.add_argument("--max-boards", type=int, default=4096,
                        help="most leaves in one device call (default 4096; x L playouts)")
    parser.add_argument("--report-as", choices=PERSPECTIVES, default="BLACK",
                        help="perspective of win rates, scores and ownership (default BLACK, as KaTrain sets)")
    parser.add_argument("--no-overlap", action="store_true",
                        help="one device call per round and board size (default: two waves, so tree work on the "
                             "host overlaps the other wave's playouts)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="no log lines on stderr")
    return parser


def make_engine(args) -> AnalysisEngine:
    buckets = default_buckets(args.max_boards)
    config = EngineConfig(search=search_config.from_args(args), max_leaves_per_search=args.max_leaves_per_search,
                          max_boards=args.max_boards, buckets=buckets, perspective=args.report_as, seed=args.seed,
                          overlap=not args.no_overlap)
    return AnalysisEngine(config, log=None if args.quiet else sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.max_leaves_per_search < 1 or args.max_boards < 1:
        print("jaxgo serve: --max-leaves-per-search and --max-boards must be positive", file=sys.stderr)
        return 2
    try:
        search_config.from_args(args)
    except ValueError as exc:
        print(f"jaxgo serve: {exc}", file=sys.stderr)
        return 2
    from jaxgo.server import transports

    engine = make_engine(args).start()
    servers = []
    try:
        if args.tcp is not None:
            servers.append(transports.TcpServer(engine, args.tcp, args.host))
        if args.unix:
            servers.append(transports.UnixServer(engine, args.unix))
        if args.http is not None:
            from jaxgo.server.web import WebServer

            servers.append(WebServer(engine, args.http, args.host))
    except OSError as exc:
        print(f"jaxgo serve: {exc}", file=sys.stderr)
        for server in servers:
            server.server_close()
        engine.stop(wait=False, timeout=5)
        return 1
    for server in servers:
        transports.start_in_thread(server)
        if not args.quiet:
            where = getattr(server, "path", None) or "%s:%d" % server.server_address[:2]
            print(f"jaxgo serve: {type(server).__name__} listening on {where}", file=sys.stderr, flush=True)
    try:
        if not servers or args.stdin:
            transports.serve_stdio(engine)
            if not servers:
                return 0
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
        engine.stop(wait=False, timeout=10)
        if not args.quiet:
            print(f"jaxgo serve: stopped after {engine.playouts} playouts in {engine.device_calls} device calls",
                  file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
