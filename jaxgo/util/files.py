"""Atomic file writes: a reader sees the old file or the complete new one, never a partial write.

Each writer fills a temporary file in the target's folder (so the final rename stays on one file system),
flushes and fsyncs it, then ``os.replace``s it over the target.  On any error the temporary file is removed
and the old file is left as it was.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
from pathlib import Path
from typing import IO, Iterator, Mapping

import numpy as np


@contextlib.contextmanager
def atomic_open(path) -> Iterator[IO[bytes]]:
    """A new binary file object whose contents replace ``path`` when the block ends without an error.

    The temporary file ``.NAME.<random>.tmp`` sits beside ``path`` and gets the permissions a plain ``open``
    would give it (umask); on any error it is removed, so nothing half-written is left.  A short write (numpy
    reports a full disk as "N requested and M written", without an errno) is raised as ENOSPC, so every writer
    says "No space left on device" alike.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        with open(tmp, "xb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.errno is None and "written" in str(exc):
            raise OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} ({exc})", str(path)) from exc
        raise


def atomic_write_bytes(path, data: bytes) -> None:
    """Replace ``path`` with ``data``."""
    with atomic_open(path) as fh:
        fh.write(data)


def atomic_write_text(path, text: str, encoding: str = "utf-8") -> None:
    """Replace ``path`` with ``text``."""
    atomic_write_bytes(path, text.encode(encoding))


def write_json_atomic(path, obj, indent: int | None = 1) -> None:
    """Replace ``path`` with ``obj`` as JSON."""
    atomic_write_text(path, json.dumps(obj, indent=indent))


def save_npy_atomic(path, array) -> None:
    """Replace ``path`` with ``array`` in ``.npy`` format (the name is kept as given, no suffix is added)."""
    with atomic_open(path) as fh:
        np.save(fh, np.asarray(array))


def save_npz_atomic(path, arrays: Mapping[str, object], *, compressed: bool = False) -> None:
    """Replace ``path`` with an ``.npz`` archive of ``arrays`` (name -> array; ``np.savez``, or
    ``np.savez_compressed``); the name is kept as given, no suffix is added."""
    with atomic_open(path) as fh:
        (np.savez_compressed if compressed else np.savez)(fh, **arrays)


__all__ = ["atomic_open", "atomic_write_bytes", "atomic_write_text", "write_json_atomic", "save_npy_atomic",
           "save_npz_atomic"]
