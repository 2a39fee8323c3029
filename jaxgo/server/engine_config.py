"""``EngineConfig``: the analysis engine's settings (``jaxgo serve``'s command line), and its device batches."""

from __future__ import annotations

import dataclasses

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


def default_buckets(max_boards: int, devices: int = 1) -> tuple:
    """Padded leaf counts per device call: 64, 512, 4096 ... up to ``max_boards`` (one shape when ``max_boards``
    <= 256, which keeps compile time small for tests and small jobs), each rounded up to a multiple of
    ``devices`` (``max_boards`` must be one).  Padding rows are not played out, so few buckets cost little; each
    is one compiled shape per board size and playout policy."""
    check_device_batch(max_boards, devices)
    if max_boards <= 256:
        return (max_boards,)
    sizes = sorted({-(-b // devices) * devices for b in (64, 512, 4096, 32768)})
    return tuple(b for b in sizes if b < max_boards) + (max_boards,)


def check_device_batch(max_boards: int, devices: int) -> None:
    """ValueError unless the leaf rows per device call (``--device-batch``) split evenly over the devices."""
    if devices < 1 or max_boards < 1:
        raise ValueError(f"device batch {max_boards} and devices {devices} must be positive")
    if max_boards % devices:
        raise ValueError(f"device batch {max_boards} is not a multiple of devices {devices}: each device plays "
                         "out an equal share of every call")
