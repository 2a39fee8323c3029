"""The project's train/test split of the game archives (``README.md`` of the data folder,
``jaxgo.util.paths.data_dir()``): train on KGS 2001, 2002, 2003, 2006, 2015; test on KGS 2017-01..06 and on Fox
pro-vs-pro even games.  ``kgs_split`` states the rule for one KGS archive; ``train_archives`` /
``heldout_archives`` (the test side; not named test_* so pytest does not collect it) name the archives of each
side so no caller has to repeat it."""

from __future__ import annotations

import re
from pathlib import Path

from jaxgo.util.paths import data_dir

TRAIN_KGS_YEARS = ("2001", "2002", "2003", "2006", "2015")
TEST_KGS_PREFIX = "KGS-2017"


def kgs_split(name: str) -> str | None:
    """'train', 'test' or None (not in the split) for a KGS archive file name such as
    ``KGS-2001-19-2298-.tar.gz`` or ``KGS-2017_01-19-733-.tar.gz``."""
    if not (name.startswith("KGS-") and name.endswith(".tar.gz")):
        return None
    if name.split("-")[1] in TRAIN_KGS_YEARS:
        return "train"
    if name.startswith(TEST_KGS_PREFIX):
        return "test"
    return None


def kgs_archives(folder, split: str) -> list[Path]:
    """The KGS archives of ``split`` ('train' or 'test') in ``folder`` (``DATA/games/kgs-highdan``), sorted."""
    return sorted(p for p in Path(folder).glob("KGS-*.tar.gz") if kgs_split(p.name) == split)


def _kgs_folder(root) -> Path:
    return Path(data_dir() if root is None else root) / "games" / "kgs-highdan"


def train_archives(root=None) -> list[Path]:
    """The training archives under the data root (default ``jaxgo.util.paths.data_dir()``): KGS 2001, 2002,
    2003, 2006, 2015 (32,047 games)."""
    return kgs_archives(_kgs_folder(root), "train")


def heldout_archives(root=None, which: str = "kgs2017") -> list[Path]:
    """The test archives under the data root (default ``data_dir()``): ``which='kgs2017'`` (KGS 2017-01..06) or
    ``'fox'`` (fox-pro-games.tar.gz; filter its records with ``accept=is_pro_vs_pro`` to get the pro-vs-pro even
    games)."""
    if which == "kgs2017":
        return kgs_archives(_kgs_folder(root), "test")
    if which == "fox":
        path = Path(data_dir() if root is None else root) / "games" / "fox-pro-games.tar.gz"
        return [path] if path.exists() else []
    raise ValueError(f"unknown test set {which!r} (kgs2017 or fox)")


_RANK = re.compile(rb"\b([BW])R\[\s*(?:[pP]\d|\d+\s*[pP])")
_HANDICAP = re.compile(rb"\bHA\[\s*([2-9])")
_SETUP = re.compile(rb"\bA[BW]\[")


def is_pro_vs_pro(data: bytes) -> bool:
    """True for a record where both BR and WR are professional ranks (Fox writes ``P9`` + dan sign; ``9p`` also
    counts) and there is no handicap (no HA >= 2, no AB/AW setup stones)."""
    colours = {m.group(1) for m in _RANK.finditer(data)}
    return colours == {b"B", b"W"} and not _HANDICAP.search(data) and not _SETUP.search(data)
