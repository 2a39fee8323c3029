"""Territory labels from finished games: GNU Go decides dead stones (`final_status_list dead`
through GTP, as in the paper); dead stones are removed and every point is assigned by area
(stones + empty regions bordered by one colour; 0 = neutral)."""
from __future__ import annotations

import os
import subprocess
import tempfile

import numpy as np

from jaxgo.go import rules
from jaxgo.go.config import Rules

# One place each for GNU Go's location and GTP vertices (re-exported under the names used here).
from jaxgo.go.coords import gtp_to_point  # noqa: E402,F401
from jaxgo.go.gtp_client import find_gnugo as gnugo_path  # noqa: E402,F401
from jaxgo.go.sgf import load_sgf, replay


def gnugo_dead(sgf_bytes: bytes, gnugo: str | None = None) -> list[str]:
    gnugo = gnugo or gnugo_path()
    if gnugo is None:
        raise RuntimeError("GNU Go not found (apt-get install -y gnugo)")
    with tempfile.NamedTemporaryFile(suffix=".sgf", delete=False) as f:
        f.write(sgf_bytes)
        name = f.name
    try:
        out = subprocess.run([gnugo, "--mode", "gtp", "--chinese-rules"],
                             input=f"loadsgf {name}\nfinal_status_list dead\nquit\n",
                             capture_output=True, text=True, timeout=120).stdout
    finally:
        os.unlink(name)
    replies = [b for b in out.split("\n\n") if b.strip()]
    if len(replies) < 2 or not replies[1].startswith("="):
        raise RuntimeError(f"GNU Go failed: {out!r}")
    return replies[1][1:].split()


def territory_labels(sgf_bytes: bytes, gnugo: str | None = None):
    """-> (size, final board int8 [P], labels int8 [P] in {1 Black, -1 White, 0 neutral})."""
    rec = load_sgf(sgf_bytes)
    n = rec.size
    game = replay(rec, Rules(size=n, komi=rec.komi, ko_rule="simple"))
    board = np.asarray(game.board(), dtype=np.int8).reshape(-1).copy()
    final = board.copy()
    for v in gnugo_dead(sgf_bytes, gnugo):
        final[gtp_to_point(v, n)] = 0
    st = rules.from_board(final)
    return n, board, np.asarray(rules.ownership(st), dtype=np.int8)
