"""Game-record data: stream SGF records from tar.gz archives, and the project's train/test split."""

from jaxgo.data.archives import (SkipStats, heldout_archives, is_pro_vs_pro, iter_archive, iter_path, iter_records,
                                 kgs_archives, kgs_split, train_archives)

__all__ = [
    "SkipStats",
    "is_pro_vs_pro",
    "iter_archive",
    "iter_path",
    "iter_records",
    "heldout_archives",
    "kgs_archives",
    "kgs_split",
    "train_archives",
]
