"""Game-record data: stream SGF records from tar.gz archives (damaged ones read up to the damage point, the loss
counted), and the project's train/test split.

``archives`` reads records (``iter_path`` / ``iter_records`` over archives, SGF files and folders), ``skips``
counts what was skipped and why, ``split`` names the archives of the train and test sides.  Records flow out as
``jaxgo.go.sgf.GameRecord`` to the feature extraction and learners above."""

from jaxgo.data.archives import iter_archive, iter_members, iter_path, iter_records
from jaxgo.data.skips import ArchiveDamage, SkipStats
from jaxgo.data.split import heldout_archives, is_pro_vs_pro, kgs_archives, kgs_split, train_archives

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
