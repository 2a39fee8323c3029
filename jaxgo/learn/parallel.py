"""Data parallelism with ``jax.sharding``: batches split over a 1-D device mesh, parameters replicated.

The learners are written for one device; placing their inputs with these shardings makes ``jax.jit`` split the
batch axis across devices and all-reduce the per-feature sums (``segment_sum`` into a replicated [K] vector),
so the same code runs on one CPU, several forced host devices (tests) or several GPUs.

Several processes (``jaxgo.util.distributed.initialize``, one per host or several on one host): the mesh spans
the devices of every process, ordered by process, so each process owns one contiguous block of rows of every
batch (``process_rows``).  A process reads only its block and hands it to ``put_batches``
(``jax.make_array_from_process_local_data``); replicated values must be equal on every process; results are
read back with ``to_host``.  The all-reduces then cross processes (gloo on CPUs, NCCL on GPUs).
"""

from __future__ import annotations

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


def make_mesh(num_devices: int | None = None) -> Mesh:
    """A 1-D mesh named ``data`` over the first ``num_devices`` devices (None: all).

    With several processes the mesh always holds every device of every process, sorted by (process, id), and
    ``num_devices``, if given, must be that total.
    """
    devices = sorted(jax.devices(), key=lambda d: (d.process_index, d.id))
    if jax.process_count() > 1:
        if num_devices is not None and num_devices != len(devices):
            raise ValueError(f"a {jax.process_count()}-process run uses all {len(devices)} devices of its "
                             f"processes, not {num_devices}")
        return Mesh(np.array(devices), ("data",))
    if num_devices is not None:
        if num_devices > len(devices):
            raise ValueError(f"asked for {num_devices} devices, only {len(devices)} present")
        devices = devices[:num_devices]
    return Mesh(np.array(devices), ("data",))


def multi_process(mesh: Mesh | None) -> bool:
    """True when ``mesh`` holds devices of other processes than this one."""
    return mesh is not None and len({d.process_index for d in mesh.devices.flat}) > 1


def replicated(mesh: Mesh) -> NamedSharding:
    return NamedSharding(mesh, P())


def batch_sharding(mesh: Mesh, ndim: int, axis: int) -> NamedSharding:
    """Sharding that splits axis ``axis`` of an ``ndim``-dimensional array over the mesh."""
    spec = [None] * ndim
    spec[axis] = "data"
    return NamedSharding(mesh, P(*spec))


def process_rows(mesh: Mesh | None, batch: int) -> tuple[int, int]:
    """(lo, hi): the rows [lo, hi) of every ``batch``-row batch that this process's devices hold (all rows with
    one process).  Raises ValueError when ``batch`` does not divide over the mesh."""
    if mesh is None:
        return 0, batch
    n = mesh.devices.size
    if batch % n:
        raise ValueError(f"batch of {batch} positions does not divide over {n} devices")
    mine = [i for i, d in enumerate(mesh.devices.flat) if d.process_index == jax.process_index()]
    if mine != list(range(mine[0], mine[-1] + 1)):
        raise ValueError("this process's devices are not contiguous in the mesh")
    per = batch // n
    return mine[0] * per, (mine[-1] + 1) * per


def put_batches(mesh: Mesh | None, arrays, axis: int):
    """Place each array split along ``axis`` over the mesh (that axis must divide by the number of devices).

    One process: the arrays are whole.  Several: each array is this process's block of rows along ``axis``
    (``process_rows``) and the global array is that axis times (devices / this process's devices) long.
    """
    if mesh is None:
        return tuple(jax.numpy.asarray(a) for a in arrays)
    n = mesh.devices.size
    local = sum(d.process_index == jax.process_index() for d in mesh.devices.flat)
    out = []
    for a in arrays:
        if a.shape[axis] % local:
            raise ValueError(f"batch axis of size {a.shape[axis]} does not divide over {local} devices")
        sharding = batch_sharding(mesh, a.ndim, axis)
        if not multi_process(mesh):
            out.append(jax.device_put(a, sharding))
            continue
        shape = list(a.shape)
        shape[axis] = a.shape[axis] // local * n
        out.append(jax.make_array_from_process_local_data(sharding, np.asarray(a), tuple(shape)))
    return tuple(out)


def put_replicated(mesh: Mesh | None, tree):
    """Place every leaf of ``tree`` whole on every device of the mesh (None: leave it as it is).  With several
    processes each process passes the same values."""
    if mesh is None:
        return tree
    sharding = replicated(mesh)
    if not multi_process(mesh):
        return jax.device_put(tree, sharding)
    return jax.tree.map(lambda x: jax.make_array_from_process_local_data(sharding, np.asarray(x),
                                                                         np.shape(x)), tree)


def to_host(x) -> np.ndarray:
    """A numpy copy of the global array ``x`` on every process (gathered when this process holds only part)."""
    if isinstance(x, jax.Array) and not x.is_fully_addressable and not x.is_fully_replicated:
        from jax.experimental import multihost_utils

        return np.asarray(multihost_utils.process_allgather(x, tiled=True))
    return np.asarray(x)
