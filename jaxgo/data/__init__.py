"""Game-record data: stream SGF records from tar.gz archives (damaged ones read up to the damage point, the loss
counted), and the project's train/test split."""

from jaxgo.data.archives import (
    ArchiveDamage,
    SkipStats,
    heldout_archives,
    is_pro_vs_pro,
    iter_archive,
    iter_members,
    iter_path,
    iter_records,
    kgs_archives,
    kgs_split,
    train_archives,
)

__all__ = [
    "ArchiveDamage",
    "SkipStats",
    "is_pro_vs_pro",
    "iter_archive",
    "iter_members",
    "iter_path",
    "iter_records",
    "heldout_archives",
    "kgs_archives",
    "kgs_split",
    "train_archives",
]
