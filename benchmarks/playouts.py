"""Playout benchmark: same as ``jaxgo bench playouts`` (see ``jaxgo/playouts/bench/throughput.py``).

Example: python benchmarks/playouts.py --size 9 19 --batch 256 1024 --compare pgx,openspiel --json
"""

import sys

from jaxgo.bench import main

if __name__ == "__main__":
    sys.exit(main(["playouts", *sys.argv[1:]]))
