"""``jaxgo bench NAME ...``: the benchmarks, each living with the code it measures.

    playouts  light-playout throughput vs pgx / OpenSpiel (``jaxgo.playouts.bench.throughput``)
    heavy     heavy vs light playouts, same batch (``jaxgo.playouts.bench.heavy``)
    search    playouts per second inside a search vs raw calls (``jaxgo.search.bench``)
    serve     analysis-server throughput with many clients (``jaxgo.server.bench``)
    gammas    feature extraction and learner speed (``jaxgo.learn.bench``)
    proof     PNS vs PP on capture problems (``jaxgo.proof.bench``)
    gtp       GTP start-up latency and first genmove / analysis line (``jaxgo.gtp.bench``)

Each prints JSON lines; ``jaxgo bench NAME --help`` describes its options.
"""

from __future__ import annotations

import importlib
import sys

BENCHMARKS = {
    "playouts": "jaxgo.playouts.bench.throughput",
    "heavy": "jaxgo.playouts.bench.heavy",
    "search": "jaxgo.search.bench",
    "serve": "jaxgo.server.bench",
    "gammas": "jaxgo.learn.bench",
    "proof": "jaxgo.proof.bench",
    "gtp": "jaxgo.gtp.bench",
}


def main(argv: list[str]) -> int:
    """Run benchmark ``argv[0]``; ``--help`` prints the list and exits 0, no name or an unknown one exits 2 (as
    ``jaxgo`` without a command does)."""
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    if not argv or argv[0] not in BENCHMARKS:
        print(__doc__, file=sys.stderr)
        return 2
    return int(importlib.import_module(BENCHMARKS[argv[0]]).main(argv[1:]) or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
