"""``EngineConfig``: the analysis engine's settings (``jaxgo serve``'s command line), and its device batches."""

from __future__ import annotations

import dataclasses
import os

from jaxgo.search.config import SearchConfig


@dataclasses.dataclass
class EngineConfig:
    search: SearchConfig = SearchConfig()  # every query's search, before its overrideSettings
    max_leaves_per_search: int = 64  # most leaves one search selects per round (when leaves_per_batch is None)
    max_boards: int = 4096  # most leaves per device call (x L playouts): ``jaxgo serve --device-batch``
    buckets: tuple = (64, 512, 4096)  # padded leaf counts per device call (multiples of ``devices``)
    devices: int = 1  # local devices each device call is sharded over (``jaxgo serve --devices``)
    perspective: str = "BLACK"  # win rates / scores / ownership reported for BLACK, WHITE or SIDETOMOVE
    seed: int = 0
    max_pv_moves: int = 40  # moves given a principal variation in a response
    overlap: bool = True  # two waves per round: one wave's tree work runs while the other's playouts do
    overlap_min_leaves: int = 512  # ... when the round has at least this many leaves (small rounds: one call)
    max_running_searches: int = 256  # searches holding a tree at once; later turns wait (fair order)
    tree_memory_mb: float = 2048.0  # all trees together: a search's node cap is its share of this
    max_tree_mb: float = 512.0  # ... and at most this much for one search
    round_seconds: float = 0.25  # a round's leaves are capped at what the device plays out in about this time (0: off)
    min_round_leaves: int = 64  # ... but never fewer leaves than this
    tree_threads: int = 0  # threads for the searches' tree work in a round; 0: ``auto_tree_threads``
    compiled_rounds: bool = True  # all searches of a wave in one compiled call (compiled_round); False: one each
    score_estimate: str = "shrunk"  # each root move's scoreLead: jaxgo.server.score_estimate.SCORE_ESTIMATES


def auto_tree_threads(search: SearchConfig) -> int:
    """Threads for the tree work of a round's searches: the host's cores (at most 16) when the playouts run on
    an accelerator, so that the tree work of many searches keeps up with the device; one with native playouts,
    which use every core themselves."""
    from jaxgo.playouts.evaluator import resolve_backend

    if resolve_backend(search.backend) == "native":
        return 1
    return max(1, min(16, os.cpu_count() or 1))


def default_buckets(max_boards: int, devices: int = 1) -> tuple:
    """Padded leaf counts per device call: 64, 512, 4096, then doubling (8192, 16384 ...) up to ``max_boards``
    (one shape when ``max_boards`` <= 256, which keeps compile time small for tests and small jobs), each rounded
    up to a multiple of ``devices`` (``max_boards`` must be one).  Each is one compiled shape per board size and
    playout policy.  The native playouts skip padding rows; a wide device's kernel steps every lane of the call,
    padding too, so the large calls of a GPU server come in steps of two: a round of 8,192 leaves is one call of
    8,192, not a quarter of 32,768."""
    check_device_batch(max_boards, devices)
    if max_boards <= 256:
        return (max_boards,)
    sizes = [64, 512, 4096]
    while sizes[-1] * 2 < max_boards:
        sizes.append(sizes[-1] * 2)
    sizes = sorted({-(-b // devices) * devices for b in sizes})
    return tuple(b for b in sizes if b < max_boards) + (max_boards,)


def check_device_batch(max_boards: int, devices: int) -> None:
    """ValueError unless the leaf rows per device call (``--device-batch``) split evenly over the devices."""
    if devices < 1 or max_boards < 1:
        raise ValueError(f"device batch {max_boards} and devices {devices} must be positive")
    if max_boards % devices:
        raise ValueError(f"device batch {max_boards} is not a multiple of devices {devices}: each device plays "
                         "out an equal share of every call")
