"""Go capture problem: BPIP controllers vs proof-number search (issue 7, Go part, capture problems only).

Usage: python studies/bpip/bpip_go.py   -- prints one JSON object per (problem, method).
"""

from __future__ import annotations

import json
import sys

from jaxgo.bpip.control import run_search
from jaxgo.bpip.go_domain import GO_GRID, LADDER, CaptureDomain, proof_number_search
from jaxgo.bpip.tree import Settings
from jaxgo.go.coords import BLACK, WHITE
from jaxgo.go.reference import ReferenceBoard

PROBLEMS = {"ladder": None, "ladder-broken-h2": 7 * 9 + 7, "ladder-broken-g3": 6 * 9 + 6}


def main() -> int:
    for name, breaker in PROBLEMS.items():
        board = ReferenceBoard.from_ascii(LADDER, to_play=BLACK)
        if breaker is not None:
            board.stones[breaker] = WHITE
        dom = CaptureDomain(3 * 9 + 4, BLACK, max_plies=40)
        s = dom.initial(board)
        pns = proof_number_search(dom, s)
        print(json.dumps({"problem": name, "method": "pns", "proved": pns["proved"], "moves": pns["moves"],
                          "expansions": pns["expansions"]}))
        for method in ("qss", "trqss", "atrqss"):
            for cost in (1e-3, 1e-5):
                r = run_search(dom, s, method, Settings(grid=GO_GRID, cost_per_etu=cost))
                print(json.dumps({"problem": name, "method": method, "cost_per_etu": cost, "move": r.move,
                                  "expansions": r.expansions, "time_units": r.time_units,
                                  "root_values": r.root_values, "stop": r.stop_reason}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
