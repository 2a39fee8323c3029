"""Nodes per second of PNS and PP on capture problems: ``python -m jaxgo.proof.bench [--problems N]
[--max-nodes N] [--json]`` (meant for ``jaxgo bench proof`` once listed in ``jaxgo.bench.OTHER_BENCHMARKS``).

Uses GNU Go's reading/capture attack tests with expected code 1 (``problems.regression_problems``); each problem
is searched with both solvers (no knowledge, prior 0.5) under a node budget; prints nodes developed, seconds
and nodes/s summed over the problems.
"""

from __future__ import annotations

import argparse
import json
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="jaxgo bench proof")
    ap.add_argument("--problems", type=int, default=30)
    ap.add_argument("--max-nodes", type=int, default=1000)
    ap.add_argument("--max-seconds", type=float, default=30.0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)

    from jaxgo.proof.learning import attempt
    from jaxgo.proof.problems import regression_problems

    probs = regression_problems()[: a.problems]
    out = []
    for solver in ("pns", "pp"):
        t0 = time.perf_counter()
        rows = [attempt(p, solver, max_nodes=a.max_nodes, max_seconds=a.max_seconds) for p in probs]
        nodes = sum(r["nodes"] for r in rows)
        secs = sum(r["seconds"] for r in rows)
        out.append(dict(solver=solver, problems=len(rows), solved=sum(r["solved"] for r in rows), nodes=nodes,
                        seconds=round(secs, 3), nodes_per_s=round(nodes / max(secs, 1e-9), 1),
                        wall_s=round(time.perf_counter() - t0, 3)))
    if a.json:
        print(json.dumps(out))
    else:
        for r in out:
            print(f"{r['solver']:4s} problems {r['problems']} solved {r['solved']} nodes {r['nodes']} "
                  f"search {r['seconds']} s -> {r['nodes_per_s']} nodes/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
