"""Decision-theoretic search control: BPIP-DFISA with QSS, TRQSS and ATRQSS (Baum & Smith; adaptation steps)."""

from jaxgo.bpip.control import METHODS, SearchResult, run_search
from jaxgo.bpip.distributions import Grid, staircase
from jaxgo.bpip.tree import Settings, Tree

__all__ = ["METHODS", "Grid", "SearchResult", "Settings", "Tree", "run_search", "staircase"]
