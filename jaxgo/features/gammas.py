"""The gamma file: Bradley-Terry move-model strengths, one per (feature group, level); and its loader.

Format (``.npz``, see docs/gammas.md, "Gamma file format"):

    format       int32 []    1
    groups       str   [G]   feature group names, ``jaxgo.features.GROUPS`` order
    offsets      int32 [G]   global index of level 0 of each group
    sizes        int32 [G]   levels per group (level 0 = absent, gamma 1)
    log_gamma    float32 [K] natural log of gamma per global index ``offsets[g] + level``; K = sum(sizes)
    meta         str   []    JSON: method, training games/positions, data split, command, date ...
    large_*      (optional) size_index, cells (packed 4 per byte), counts of the large-pattern dictionary
                             (``jaxgo.features.large.LargeDictionary``) of the ``"large"`` group, which comes
                             last; its level 1 + i is dictionary entry i

A move's strength is ``exp(sum_g log_gamma[offsets[g] + level_g])``; the pattern group's level is
``1 + pattern id`` with ids from ``jaxgo.features.canonical_pattern_table()``.  ``load_default()`` reads the
file shipped in the package (``jaxgo/features/default_gammas.npz``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
from pathlib import Path

import numpy as np

from jaxgo.features import GROUPS, group_offsets, group_sizes, num_features
from jaxgo.features.large import LargeDictionary
from jaxgo.util.files import save_npz_atomic

FORMAT = 1
DEFAULT_PATH = Path(__file__).with_name("default_gammas.npz")
DEFAULT_LARGE_PATH = Path(__file__).with_name("default_gammas_large.npz")
LARGE_GROUP = "large"


def layout(large: LargeDictionary | None = None):
    """(groups, sizes int32 [G'], fixed bool [K]) of a move model: the base groups of ``jaxgo.features``, plus
    the ``"large"`` group (dictionary entries + the absent level) when ``large`` is given; ``fixed`` marks every
    group's absent level (gamma 1)."""
    groups, sizes = tuple(GROUPS), group_sizes()
    if large is not None:
        groups, sizes = groups + (LARGE_GROUP,), np.append(sizes, len(large) + 1).astype(np.int32)
    fixed = np.zeros(int(sizes.sum()), bool)
    fixed[np.concatenate([[0], np.cumsum(sizes)[:-1]])] = True
    return groups, sizes, fixed


@dataclasses.dataclass
class Gammas:
    """Gammas of every feature level (see the module docstring for the layout)."""

    log_gamma: np.ndarray  # float32 [K]
    groups: tuple = GROUPS
    offsets: np.ndarray = dataclasses.field(default_factory=group_offsets)
    sizes: np.ndarray = dataclasses.field(default_factory=group_sizes)
    meta: dict = dataclasses.field(default_factory=dict)
    large: LargeDictionary | None = None

    def __post_init__(self):
        self.log_gamma = np.asarray(self.log_gamma, np.float32)
        self.offsets = np.asarray(self.offsets, np.int32)
        self.sizes = np.asarray(self.sizes, np.int32)
        self.groups = tuple(str(g) for g in self.groups)
        if self.log_gamma.shape != (int(self.sizes.sum()),):
            raise ValueError(f"log_gamma has {self.log_gamma.shape} entries, sizes sum to {int(self.sizes.sum())}")
        if not np.array_equal(self.offsets, np.concatenate([[0], np.cumsum(self.sizes)[:-1]])):
            raise ValueError("offsets do not match sizes")
        if (LARGE_GROUP in self.groups) != (self.large is not None):
            raise ValueError("a large-pattern group needs its dictionary (and a dictionary its group)")

    @classmethod
    def from_layout(cls, log_gamma, large: LargeDictionary | None = None, meta: dict | None = None) -> "Gammas":
        groups, sizes, _ = layout(large)
        return cls(log_gamma, groups=groups, offsets=np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes=sizes,
                   meta=meta or {}, large=large)

    def group(self, name: str) -> np.ndarray:
        """float32 [levels]: log gammas of one group, indexed by level (entry 0 = absent = 0.0)."""
        g = self.groups.index(name)
        return self.log_gamma[self.offsets[g]:self.offsets[g] + self.sizes[g]]

    @property
    def pattern_log_gamma(self) -> np.ndarray:
        """float32 [num patterns]: log gamma per canonical 3x3 pattern id (level 1 + id)."""
        return self.group("pattern")[1:]

    def compatible(self) -> bool:
        """True when the layout matches this version of ``jaxgo.features`` (and its dictionary, if any)."""
        groups, sizes, _ = layout(self.large)
        return self.groups == groups and np.array_equal(self.sizes, sizes)

    @property
    def base_log_gamma(self) -> np.ndarray:
        """float32 [num_features()]: the base groups' log gammas (what playouts and search priors use)."""
        return self.log_gamma[:num_features()]

    def save(self, path) -> None:
        """Write atomically (``jaxgo.util.files.save_npz_atomic``)."""
        extra = {}
        if self.large is not None:
            extra = self.large.arrays(prefix="large_")
        save_npz_atomic(path, dict(format=np.int32(FORMAT), groups=np.array(self.groups), offsets=self.offsets,
                                   sizes=self.sizes, log_gamma=self.log_gamma,
                                   meta=np.array(json.dumps(self.meta)), **extra), compressed=True)


def load(path) -> Gammas:
    """Read a gamma file; ValueError when it is not one."""
    try:
        with np.load(os.fspath(path), allow_pickle=False) as data:
            if int(data["format"]) != FORMAT:
                raise ValueError(f"{path}: gamma file format {int(data['format'])}, expected {FORMAT}")
            large = None
            if "large_cells" in data.files:
                large = LargeDictionary.from_arrays(data, prefix="large_")
            return Gammas(log_gamma=data["log_gamma"], groups=tuple(data["groups"].tolist()),
                          offsets=data["offsets"], sizes=data["sizes"], meta=json.loads(str(data["meta"])),
                          large=large)
    except (KeyError, OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a gamma file ({exc})") from exc


MAX_FILE_BYTES = 256 << 20  # a gamma file named by a client: larger files are refused unread


def load_checked(path, max_bytes: int = MAX_FILE_BYTES) -> Gammas:
    """A gamma file named by a client (GTP ``kata-set_param gammas``, a query's ``overrideSettings``), checked
    before anything uses it: ValueError unless ``path`` is a regular file (never a FIFO or a device, which
    would block or never end) of at most ``max_bytes`` that loads as a gamma file of this layout with finite
    log gammas."""
    name = os.fspath(path)
    try:
        info = os.stat(name)
    except (OSError, ValueError):
        raise ValueError(f"gammas: cannot read {name}") from None
    if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
        raise ValueError(f"gammas: {name} is not a gamma file")
    try:
        gammas = load(name)
    except Exception as exc:  # numpy raises ValueError, zipfile BadZipFile, EOFError ... on foreign files
        raise ValueError(f"gammas: {name} is not a gamma file ({type(exc).__name__})") from None
    if not gammas.compatible() or not np.isfinite(gammas.log_gamma).all():
        raise ValueError(f"gammas: {name} does not match this version's features (or holds non-finite values)")
    return gammas


def load_default() -> Gammas:
    """The gammas shipped with the package (trained on the training split; see ``meta``): 3x3 patterns and
    tactical features, the model of the heavy playouts and the search priors."""
    return load(DEFAULT_PATH)


def load_default_large() -> Gammas:
    """The shipped move model with large patterns too (``jaxgo.features.large``): the better move predictor,
    the default of ``jaxgo gammas eval``."""
    return load(DEFAULT_LARGE_PATH)


def load_named(name: str | None) -> Gammas:
    """``"large"`` or None: ``load_default_large()``; ``"base"``: ``load_default()``; anything else: a path."""
    if name in (None, "large"):
        return load_default_large()
    if name == "base":
        return load_default()
    return load(name)


def neutral() -> Gammas:
    """All gammas 1 (uniform move model)."""
    return Gammas(log_gamma=np.zeros(int(group_sizes().sum()), np.float32))
