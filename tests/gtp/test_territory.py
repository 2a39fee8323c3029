"""GTP `jaxgo-territory` (jaxgo.gtp.territory) through the engine's ``handle``."""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np

from jaxgo.go.config import Rules
from jaxgo.gtp.engine import make_gtp_engine
from jaxgo.gtp.protocol import Dispatcher
from jaxgo.gtp.session import GtpSession
from jaxgo.gtp.territory import COMMANDS
from jaxgo.search.config import SearchConfig

CHEAP = SearchConfig(playout_policy="light", bias_c2=0.0)


def parse(resp, size):
    assert resp.startswith("= ") and resp.endswith("\n\n")
    rows = [[float(x) for x in ln.split()] for ln in resp[2:].strip().splitlines()]
    assert len(rows) == size and all(len(r) == size for r in rows)
    return np.array(rows)


def test_jaxgo_territory_leans_to_the_stones():
    eng = crf_engine(7, 0.5)
    # Black wall on column B (top to bottom), White stone at F2
    for cmd in ("play b B7", "play b B6", "play b B5", "play b B4", "play b B3", "play b B2", "play b B1",
                "play w F2"):
        assert eng.handle(cmd).startswith("=")
    t = parse(eng.handle("jaxgo-territory b5 bp"), 7)  # the defaults, named: the CRF in this process
    assert np.all(np.abs(t) <= 1)
    assert t[:, 0].min() > 0.5                    # column A behind the Black wall
    assert t[5, 5] < -0.5                         # F2: row 2 from the bottom -> index 5, column F -> 5
    assert t[5, 5] < t[5, 3] < t[5, 1]


def crf_engine(size, komi):
    """A dispatcher with the territory family and `play` only (no analysis engine is ever created)."""
    from jaxgo.gtp.core import play

    return Dispatcher(GtpSession(Rules(size=size, komi=komi)), dict(COMMANDS, play=play))


def test_jaxgo_territory_options_and_errors():
    eng = crf_engine(5, 0.5)
    eng.handle("play b C3")
    bp = parse(eng.handle("jaxgo-territory b5 bp"), 5)
    ex = parse(eng.handle("jaxgo-territory b5 exact"), 5)
    # The exact B5 marginal of the stone's own point is 0.83 with the shipped model (0.79 with the model of
    # 2026-11-21).  The bound was first written as > 0.9 (commit 8508c18), which never held: the value was 0.79 at
    # that very commit, and the next commit (4b860c2) lowered it to 0.5 without saying so.  What the CRF must show
    # is the shape: the stone's point leans to Black more than any other point, and a lone stone in the centre
    # gives a picture with the board's eight symmetries.
    assert ex[2, 2] > 0.5 and ex[2, 2] == ex.max()
    assert all(np.allclose(ex, sym, atol=1e-2) for sym in (ex.T, ex[::-1], ex[:, ::-1], np.rot90(ex)))
    assert np.abs(bp - ex).max() < 0.2   # BP close to exact on an open 5x5 board
    assert eng.handle("jaxgo-territory nonsense").startswith("? syntax error")
    assert eng.handle("jaxgo-territory blib sw").startswith("= ")
    eng19 = crf_engine(19, 7.5)
    assert eng19.handle("jaxgo-territory exact").startswith("?")


def test_default_engine_routes_territory_options_to_the_crf():
    eng = make_gtp_engine(Rules(size=5, komi=0.5), CHEAP, seed=1)
    eng.handle("play b C3")
    direct = crf_engine(5, 0.5)
    direct.handle("play b C3")
    assert eng.handle("jaxgo-territory b5 exact") == direct.handle("jaxgo-territory b5 exact")
    assert eng.handle("jaxgo-territory nonsense").startswith("? syntax error")
    plain = parse(eng.handle("jaxgo-territory"), 5)  # the defaults, in this process: no analysis engine
    assert plain[2, 2] > 0.5 and np.all(np.abs(plain) <= 1)
    assert eng.handle("jaxgo-territory") == direct.handle("jaxgo-territory b5 bp")
    assert eng.session.analysis.client is None
