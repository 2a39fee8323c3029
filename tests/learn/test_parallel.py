"""Data parallel training with jax.sharding: on two forced host devices, LMP / MM / Adam give the one-device
gammas (run in a subprocess, since the device count is fixed when JAX starts)."""

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import os, sys
    import jax
    import numpy as np
    sys.path.insert(0, os.path.join(sys.argv[2], "tests", "learn"))
    from test_train import fake_shards
    from jaxgo.features import gammas as gm
    from jaxgo.learn import train
    from pathlib import Path
    assert len(jax.devices()) == 2, jax.devices()
    tmp = Path(sys.argv[1])
    data = fake_shards(tmp / "shards")
    runs = {"lmp": {"passes": 2, "batch": 8}, "mm": {"iterations": 2, "batch": 16}, "sgd": {"batch": 8}}
    for method in sys.argv[3].split(","):
        kw = runs[method]
        train.train(data, method, tmp / "one.npz", **kw)
        train.train(data, method, tmp / "two.npz", devices=2, **kw)
        a, b = gm.load(tmp / "one.npz").log_gamma, gm.load(tmp / "two.npz").log_gamma
        assert np.allclose(a, b, atol=1e-4), (method, np.abs(a - b).max())
        assert np.abs(a).max() > 0.1
    try:
        train.train(data, "lmp", tmp / "odd.npz", batch=7, devices=2)
        raise SystemExit("an odd batch was split over 2 devices")
    except ValueError:
        pass
    print("OK")
""")


def run_two_devices(tmp_path, methods: str):
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=2")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path), root, methods], env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("OK"), proc.stderr[-3000:]


@pytest.mark.slow
def test_two_forced_host_devices_match_one_lmp(tmp_path):
    run_two_devices(tmp_path, "lmp")


@pytest.mark.slow
def test_two_forced_host_devices_match_one_mm_sgd(tmp_path):
    run_two_devices(tmp_path, "mm,sgd")
