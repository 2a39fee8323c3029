"""Checkpoints of a training run (``jaxgo.learn.train``): the state saved after every shard or sweep, read back
by a new run with the same settings, and shared by every process of a multi-process run.

``DIR/state.npz`` holds the arrays of the run and its ``info`` (settings, progress) as JSON, written atomically
(``jaxgo.util.files``).  ``resume`` decides whether a checkpoint is continued (same settings, or only more LMP / SGD
passes), refused (other settings) or absent; in a multi-process run process 0 reads it and broadcasts it
(``pack_state`` / ``unpack_state`` as npz bytes), so all processes continue from the same state or raise the same
error.  LMP's per-batch factors of the previous pass live in ``DIR/factors-<shard>.npy``; a shard being committed
when the run stopped leaves a ``.next.npy`` file that ``recover_factors`` finishes or rolls back.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import jax.numpy as jnp
import numpy as np

from jaxgo.learn import parallel
from jaxgo.util import distributed
from jaxgo.util.files import save_npz_atomic


def save_state(folder: Path, arrays: dict, info: dict) -> None:
    save_npz_atomic(folder / "state.npz",
                    dict(info=np.array(json.dumps(info)), **{k: np.asarray(v) for k, v in arrays.items()}))


def load_state(folder: Path):
    """(arrays, info) of ``folder/state.npz``, (None, None) when there is none; ValueError (one line, the file
    left as it is) when it is unreadable (truncated, empty, a folder, not an npz of ours) or holds a number
    that is not finite."""
    path = folder / "state.npz"
    if not os.path.lexists(path):
        return None, None
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files if k != "info"}
            info = json.loads(str(data["info"]))
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        raise ValueError(f"checkpoint {path} is unreadable ({type(exc).__name__}: {exc}); remove it to start "
                         "afresh") from None
    if not isinstance(info, dict) or not isinstance(info.get("settings"), dict):
        raise ValueError(f"checkpoint {path} has no run settings; remove it to start afresh")
    for name, value in arrays.items():
        if value.dtype.kind not in "fiub" or not np.all(np.isfinite(value)):
            raise ValueError(f"checkpoint {path}: {name} is not finite numbers (NaN, infinity or text); remove "
                             "it to start afresh")
    return arrays, info


def check_progress(info: dict, limits: dict, ckpt) -> None:
    """ValueError unless each ``info[key]`` is an integer in [0, limits[key]] (a hand-edited checkpoint)."""
    for key, high in limits.items():
        value = info.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
            raise ValueError(f"checkpoint {ckpt}: {key} {value!r} should be an integer in 0..{high}")


def check_arrays(arrays: dict, shapes: dict, ckpt) -> None:
    """ValueError unless ``arrays`` holds each name of ``shapes`` with that shape."""
    for name, shape in shapes.items():
        if name not in arrays or arrays[name].shape != tuple(shape):
            got = arrays[name].shape if name in arrays else "nothing"
            raise ValueError(f"checkpoint {ckpt}: {name} should have shape {tuple(shape)}, has {got}")


def pack_state(arrays: dict | None, info: dict | None, error: str | None) -> bytes:
    """A checkpoint (or the error met reading it) as npz bytes, to broadcast from process 0."""
    buf = io.BytesIO()
    np.savez(buf, header=np.array(json.dumps({"info": info, "error": error, "empty": arrays is None})),
             **{k: np.asarray(v) for k, v in (arrays or {}).items()})
    return buf.getvalue()


def unpack_state(data: bytes):
    """(arrays or None, info or None, error or None) from ``pack_state``'s bytes."""
    with np.load(io.BytesIO(data)) as npz:
        header = json.loads(str(npz["header"]))
        arrays = None if header["empty"] else {k: npz[k] for k in npz.files if k != "header"}
    return arrays, header["info"], header["error"]


def more_passes(before: dict | None, now: dict) -> bool:
    """True if ``now`` asks an LMP/SGD checkpoint made with ``before`` for more passes and nothing else (an LMP
    run of one pass kept no per-batch factors, so it cannot be continued)."""
    if not before or now["method"] not in ("lmp", "sgd") or (now["method"] == "lmp" and before["passes"] < 2):
        return False
    same = {k: v for k, v in before.items() if k != "passes"} == {k: v for k, v in now.items() if k != "passes"}
    return same and now["passes"] > before["passes"]


def resume(ckpt: Path | None, settings: dict, cluster) -> tuple:
    """(arrays, info) of the checkpoint in ``ckpt`` that this run continues, or (None, None) for a fresh run.

    Process 0 reads and checks it (a checkpoint of other settings is refused, one of fewer LMP/SGD passes is
    continued, LMP's half-committed factor file is finished or rolled back) and broadcasts the result, so every
    process resumes from the same state or raises the same ValueError.
    """
    def read():
        arrays, info = load_state(ckpt) if ckpt else (None, None)
        if info is not None and more_passes(info.get("settings"), settings):
            info["settings"] = settings  # a finished (or running) LMP/SGD run continues with more passes
        if info is not None and info.get("settings") != settings:
            raise ValueError(f"checkpoint {ckpt} belongs to another run ({info.get('settings')}); use another "
                             "folder")
        if info is not None and settings["method"] == "lmp":
            recover_factors(ckpt, info)
        return arrays, info

    if cluster.num_processes == 1:
        return read()
    payload = None
    if cluster.is_writer:
        try:
            payload = pack_state(*read(), None)
        except (ValueError, OSError, KeyError, zipfile.BadZipFile) as exc:
            payload = pack_state(None, None, f"{type(exc).__name__}: {exc}" if not isinstance(exc, ValueError)
                            else str(exc))
    arrays, info, error = unpack_state(distributed.broadcast_bytes(payload))
    if error:
        raise ValueError(error)
    return arrays, info


def load_factors(ckpt: Path, name: str, cluster, mesh):
    """float32 [nb, K]: shard ``name``'s LMP factors of the previous pass, read by process 0 and broadcast."""
    if cluster.num_processes == 1:
        path = factor_path(ckpt, name)
        try:
            factors = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise ValueError(f"checkpoint factor file {path} is unreadable ({type(exc).__name__}: {exc}); remove "
                             f"{ckpt} to start afresh") from None
        if factors.dtype.kind != "f" or not np.all(np.isfinite(factors)):
            raise ValueError(f"checkpoint factor file {path} is not finite numbers; remove {ckpt} to start afresh")
        return jnp.asarray(factors)
    data = factor_path(ckpt, name).read_bytes() if cluster.is_writer else None
    return replicate(mesh, np.load(io.BytesIO(distributed.broadcast_bytes(data))))


def replicate(mesh, x):
    """``x`` as an input of the jitted passes: replicated over a multi-process mesh, else a plain device array."""
    if parallel.multi_process(mesh):
        return parallel.put_replicated(mesh, np.asarray(x))
    return jnp.asarray(x)


def factor_path(folder: Path, name: str, pending: bool = False) -> Path:
    return folder / f"factors-{name}{'.next' if pending else ''}.npy"


def recover_factors(folder: Path, info: dict) -> None:
    """Finish or roll back the factor file of the shard that was being committed when the run stopped."""
    committed = info.get("committed") if info else None
    for path in folder.glob("factors-*.next.npy"):
        name = path.name[len("factors-"):-len(".next.npy")]
        if name == committed:
            os.replace(path, factor_path(folder, name))
        else:
            path.unlink()
