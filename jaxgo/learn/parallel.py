"""Data parallelism with ``jax.sharding``: batches split over a 1-D device mesh, parameters replicated.

The learners are written for one device; placing their inputs with these shardings makes ``jax.jit`` split the
batch axis across devices and all-reduce the per-feature sums (``segment_sum`` into a replicated [K] vector),
so the same code runs on one CPU, several forced host devices (tests) or several GPUs.
"""

from __future__ import annotations

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def make_mesh(num_devices: int | None = None) -> Mesh:
    """A 1-D mesh named ``data`` over the first ``num_devices`` devices (None: all)."""
    devices = jax.devices()
    if num_devices is not None:
        if num_devices > len(devices):
            raise ValueError(f"asked for {num_devices} devices, only {len(devices)} present")
        devices = devices[:num_devices]
    return Mesh(np.array(devices), ("data",))


def replicated(mesh: Mesh) -> NamedSharding:
    return NamedSharding(mesh, P())


def batch_sharding(mesh: Mesh, ndim: int, axis: int) -> NamedSharding:
    """Sharding that splits axis ``axis`` of an ``ndim``-dimensional array over the mesh."""
    spec = [None] * ndim
    spec[axis] = "data"
    return NamedSharding(mesh, P(*spec))


def put_batches(mesh: Mesh | None, arrays, axis: int):
    """device_put each array split along ``axis`` (its size must divide by the number of devices)."""
    if mesh is None:
        return tuple(jax.numpy.asarray(a) for a in arrays)
    n = mesh.devices.size
    out = []
    for a in arrays:
        if a.shape[axis] % n:
            raise ValueError(f"batch axis of size {a.shape[axis]} does not divide over {n} devices")
        out.append(jax.device_put(a, batch_sharding(mesh, a.ndim, axis)))
    return tuple(out)


def put_replicated(mesh: Mesh | None, tree):
    if mesh is None:
        return tree
    return jax.device_put(tree, replicated(mesh))
