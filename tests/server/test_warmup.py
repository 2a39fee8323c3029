"""The compile clock behind maxTime's warm-up allowance (jaxgo.server.warmup)."""

import jax
import jax.numpy as jnp
import numba

from jaxgo.server import warmup


def test_numba_and_jax_compiles_are_counted_and_calls_are_not():
    warmup.install()
    warmup.install()  # twice: one set of listeners

    @numba.njit
    def add(a, b):
        return a + b

    before = warmup.compile_seconds()
    assert add(1, 2) == 3  # the first call compiles
    after_numba = warmup.compile_seconds()
    assert after_numba > before
    assert add(3, 4) == 7 and warmup.compile_seconds() == after_numba  # a compiled call is not warm-up

    @jax.jit
    def double(x):
        return 2 * x

    assert float(double(jnp.float32(1.5))) == 3.0
    assert warmup.compile_seconds() > after_numba


def test_the_heap_is_settled_once_per_process():
    import gc

    warmup.settle_heap()
    frozen = gc.get_freeze_count()
    assert frozen > 0  # whoever settled first (a server test in this worker, or this call), it froze the heap
    assert warmup.settle_heap() is False  # never again: what later rounds make stays collectable
    assert gc.get_freeze_count() == frozen
