"""Where the shared data (game archives, problem sets, rules test suites) is read from.

``data_dir()`` is, in order: the ``JAXGO_DATA`` environment variable when set; else ``shared/data`` beside the
checkout (``<checkout>/../shared/data``, the checkout being the folder that holds the ``jaxgo`` package) when
that folder exists; else ``../shared/data`` relative to the current directory.
"""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """The shared data folder (``JAXGO_DATA``, else ``<checkout>/../shared/data``, else ``../shared/data``)."""
    env = os.environ.get("JAXGO_DATA")
    if env:
        return Path(env)
    beside = Path(__file__).resolve().parents[3] / "shared" / "data"
    if beside.is_dir():
        return beside
    return Path("..") / "shared" / "data"


__all__ = ["data_dir"]
