"""The persistent compilation cache of the ``jaxgo`` command."""

from __future__ import annotations

import os
import subprocess
import sys


def run_python(code: str, **env) -> str:
    full = dict(os.environ, JAX_PLATFORMS="cpu", **env)
    for name in ("JAX_COMPILATION_CACHE_DIR", "JAXGO_NO_CACHE"):
        if name not in env:
            full.pop(name, None)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=300,
                          check=True).stdout


def test_enable_configures_jax_without_importing_it(tmp_path):
    out = run_python(
        "import sys\n"
        "from jaxgo.util import jitcache\n"
        "path = jitcache.enable()\n"
        "assert 'jax' not in sys.modules  # XLA flags can still be chosen afterwards\n"
        "import jax, jax.numpy as jnp\n"
        "print(path, jax.config.jax_compilation_cache_dir)\n"
        "big = jax.jit(lambda x: jnp.linalg.qr(x @ x.T + jnp.sin(x))[0].sum())\n"
        "print(float(big(jnp.ones((64, 64)))))\n",
        JAXGO_CACHE_DIR=str(tmp_path / "xla"))
    path, configured = out.split("\n")[0].split()
    assert path == configured == str(tmp_path / "xla")


def test_cache_can_be_turned_off(tmp_path):
    out = run_python("from jaxgo.util import jitcache\nprint(jitcache.enable())\n", JAXGO_NO_CACHE="1",
                     JAXGO_CACHE_DIR=str(tmp_path / "xla"))
    assert out.strip() == "None"
    assert not (tmp_path / "xla").exists()


def test_configure_sets_jax_and_leaves_the_environment_alone(tmp_path):
    out = run_python(
        "import os, jax\n"
        "from jaxgo.util import jitcache\n"
        f"jitcache.configure(jax, {str(tmp_path / 'xla')!r})\n"
        "print(jax.config.jax_compilation_cache_dir, jax.config.jax_persistent_cache_min_compile_time_secs,\n"
        "      'JAX_COMPILATION_CACHE_DIR' in os.environ)\n")
    assert out.split() == [str(tmp_path / "xla"), "0.1", "False"]
