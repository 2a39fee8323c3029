"""Native CPU playouts: one board at a time, compiled by numba, on every core.

    board     the board: a flat array with a border, chains as rings, exact (or pseudo-) liberties, an empty
              list with O(1) removal, simple ko, area scoring
    light     uniform playouts, "sample, then validate" over the empty list
    features  the heavy and rule policies' weight of a point (3x3 pattern and tactical features)
    heavy     heavy playouts: per-point weights of both colours kept up to date around each move, drawn by
              row sums
    rules     rule playouts drawn tier by tier (captures, saves, shapes, anything)
    ladder    bounded ladder reading on board copies (``jaxgo.go.ladder``'s reader), for the ladder_* policies
    runner    S positions x L playouts spread over threads that run without the GIL
    checks    compiled self-checks for tests (invariants recomputed from scratch)
    random    per-playout random streams

Behind ``jaxgo.playouts.evaluator`` (``backend="native"``, the default on a CPU); the XLA kernels of
``jaxgo.playouts.xla.light`` / ``heavy`` play the same policies on accelerators.  docs/native.md describes the design
and its measurements.

numba caches each compiled function on disk keyed by its own source file only, so after an edit of one of
these modules a caller in another could load a stale copy of it; ``drop_stale_cache`` (run on import) clears the
package's cache whenever the sources change.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def drop_stale_cache(folder: Path = Path(__file__).parent, sources: list[Path] | None = None) -> bool:
    """Delete numba's cache files in ``folder`` when the sources its compiled code depends on (``sources``, by
    default the folder's own modules) differ from those it was built from (a digest kept beside them); returns
    whether it deleted anything.  Harmless on a read-only install.  Modules outside this package that compile
    calls into it (``jaxgo.search``) pass this package's sources together with their own."""
    cache = folder / "__pycache__"
    paths = sorted(sources) if sources is not None else sorted(folder.glob("*.py"))
    digest = hashlib.sha1(b"".join(path.read_bytes() for path in paths)).hexdigest()
    stamp = cache / "native-sources.sha1"
    try:
        if stamp.is_file() and stamp.read_text() == digest:
            return False
        stale = list(cache.glob("*.nbi")) + list(cache.glob("*.nbc"))
        for path in stale:
            path.unlink(missing_ok=True)
        cache.mkdir(exist_ok=True)
        stamp.write_text(digest)
        return bool(stale)
    except OSError:
        return False


NATIVE_SOURCES = sorted(Path(__file__).parent.glob("*.py"))

drop_stale_cache()
