"""GTP `jaxgo-territory` through jaxgo.gtp.GtpEngine.handle."""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np

from jaxgo.config import Rules
from jaxgo.gtp import GtpEngine


def parse(resp, size):
    assert resp.startswith("= ") and resp.endswith("\n\n")
    rows = [[float(x) for x in ln.split()] for ln in resp[2:].strip().splitlines()]
    assert len(rows) == size and all(len(r) == size for r in rows)
    return np.array(rows)


def test_jaxgo_territory_leans_to_the_stones():
    eng = GtpEngine(Rules(size=7, komi=0.5), seed=1)
    # Black wall on column B (top to bottom), White stone at F2
    for cmd in ("play b B7", "play b B6", "play b B5", "play b B4", "play b B3", "play b B2", "play b B1",
                "play w F2"):
        assert eng.handle(cmd).startswith("=")
    t = parse(eng.handle("jaxgo-territory"), 7)
    assert np.all(np.abs(t) <= 1)
    assert t[:, 0].min() > 0.5                    # column A behind the Black wall
    assert t[5, 5] < -0.5                         # F2: row 2 from the bottom -> index 5, column F -> 5
    assert t[5, 5] < t[5, 3] < t[5, 1]


def test_jaxgo_territory_options_and_errors():
    eng = GtpEngine(Rules(size=5, komi=0.5), seed=1)
    eng.handle("play b C3")
    bp = parse(eng.handle("jaxgo-territory b5 bp"), 5)
    ex = parse(eng.handle("jaxgo-territory b5 exact"), 5)
    assert ex[2, 2] > 0.5 and np.abs(bp - ex).max() < 0.2   # BP close to exact on an open 5x5 board
    assert eng.handle("jaxgo-territory nonsense").startswith("? syntax error")
    eng19 = GtpEngine(Rules(size=19, komi=7.5), seed=1)
    assert eng19.handle("jaxgo-territory exact").startswith("?")
