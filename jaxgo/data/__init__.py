"""Game-record data: stream SGF records from tar.gz archives, and the project's train/test split."""

from jaxgo.data.archives import DEFAULT_ROOT, SkipStats, is_pro_vs_pro, iter_archive, iter_path, iter_records, heldout_archives, train_archives

__all__ = [
    "DEFAULT_ROOT",
    "SkipStats",
    "is_pro_vs_pro",
    "iter_archive",
    "iter_path",
    "iter_records",
    "heldout_archives",
    "train_archives",
]
