"""Stream SGF game records straight out of tar.gz archives (no unpacking), skipping and counting bad ones.

The split (``README.md`` of the data folder, ``jaxgo.util.paths.data_dir()``): train on KGS 2001, 2002, 2003, 2006,
2015; test on KGS 2017-01..06 and on Fox pro-vs-pro even games.  ``kgs_split`` states the rule for one KGS
archive; ``train_archives`` / ``heldout_archives`` (the test side; not named test_* so pytest does not collect
it) name the archives of each side so no caller has to repeat it.  Originals: u-go.net KGS archives (via godmoves/Standard_Computer_Go_Dataset)
and featurecat/go-dataset for Fox.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import re
import tarfile
from pathlib import Path
from typing import Callable, Iterator

from jaxgo.go.sgf import GameRecord, SGFError, load_sgf
from jaxgo.util.paths import data_dir

TRAIN_KGS_YEARS = ("2001", "2002", "2003", "2006", "2015")
TEST_KGS_PREFIX = "KGS-2017"


@dataclasses.dataclass
class SkipStats:
    """Counts of records read and skipped, by reason (the reason is the first words of the error)."""

    read: int = 0
    kept: int = 0
    skipped: collections.Counter = dataclasses.field(default_factory=collections.Counter)

    @property
    def num_skipped(self) -> int:
        return sum(self.skipped.values())

    def skip(self, reason: str) -> None:
        self.skipped[reason] += 1


def _reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return re.sub(r"\d+", "N", text.split(":")[0])[:60]


def iter_archive(path, stats: SkipStats | None = None, *, size: int | None = 19,
                 accept: Callable[[bytes], bool] | None = None,
                 limit: int | None = None) -> Iterator[tuple[str, GameRecord]]:
    """Yield ``(member name, GameRecord)`` for every ``.sgf`` member of a tar.gz archive, in archive order.

    Records that fail to parse, have another board size than ``size`` (None: any), or are rejected by
    ``accept(raw_bytes)`` are skipped and counted in ``stats``; nothing raises except a missing archive.
    ``limit`` stops after that many kept records.
    """
    stats = stats if stats is not None else SkipStats()
    with tarfile.open(os.fspath(path), "r:gz") as archive:
        for member in archive:
            if not member.isfile() or not member.name.lower().endswith(".sgf"):
                continue
            if limit is not None and stats.kept >= limit:
                return
            stats.read += 1
            try:
                data = archive.extractfile(member).read()
            except (OSError, tarfile.TarError) as exc:  # a damaged member
                stats.skip(f"unreadable member: {type(exc).__name__}")
                continue
            if accept is not None and not accept(data):
                stats.skip("not accepted by filter")
                continue
            record = _accepted_record(data, stats, size)
            if record is not None:
                yield member.name, record


def iter_records(paths, stats: SkipStats | None = None, **kwargs) -> Iterator[tuple[str, GameRecord]]:
    """``iter_path`` over several archives / SGF files / folders in turn (``limit`` counts over all of them)."""
    stats = stats if stats is not None else SkipStats()
    for path in paths:
        yield from iter_path(path, stats, **kwargs)
        if kwargs.get("limit") is not None and stats.kept >= kwargs["limit"]:
            return


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
    """True for a record where both BR and WR are professional ranks (Fox writes ``P9`` + dan sign; ``9p`` also counts) and there is no handicap
    (no HA >= 2, no AB/AW setup stones)."""
    colours = {m.group(1) for m in _RANK.finditer(data)}
    return colours == {b"B", b"W"} and not _HANDICAP.search(data) and not _SETUP.search(data)


def iter_path(path, stats: SkipStats | None = None, *, size: int | None = 19,
              accept: Callable[[bytes], bool] | None = None,
              limit: int | None = None) -> Iterator[tuple[str, GameRecord]]:
    """Records from an SGF file, a folder (its ``*.sgf`` files, recursively, sorted) or a tar.gz archive, with
    the filters of ``iter_archive``.  A missing path raises FileNotFoundError."""
    stats = stats if stats is not None else SkipStats()
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file or folder: {path}")
    if path.is_file() and (path.name.endswith((".tar.gz", ".tgz", ".tar"))):
        yield from iter_archive(path, stats, size=size, accept=accept, limit=limit)
        return
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.suffix.lower() == ".sgf")
    for file in files:
        if limit is not None and stats.kept >= limit:
            return
        stats.read += 1
        data = file.read_bytes()
        if accept is not None and not accept(data):
            stats.skip("not accepted by filter")
            continue
        record = _accepted_record(data, stats, size)
        if record is not None:
            yield str(file), record


def _accepted_record(data: bytes, stats: SkipStats, size: int | None) -> GameRecord | None:
    """The parsed record of one SGF, counted as kept, or None with the reason counted as a skip (never fatal:
    sgfmill can raise odd things on garbage)."""
    try:
        record = load_sgf(data)
    except SGFError as exc:
        stats.skip(_reason(exc))
        return None
    except Exception as exc:
        stats.skip(f"parser crash: {type(exc).__name__}")
        return None
    if size is not None and record.size != size:
        stats.skip(f"board size {record.size}")
        return None
    if not record.moves:
        stats.skip("no moves")
        return None
    stats.kept += 1
    return record
