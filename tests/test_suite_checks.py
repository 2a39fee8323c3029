"""tests/conftest.py's guards, driven through a real pytest run: under CI a missing data folder stops the run
(exit status 3) instead of letting half the suite skip; outside CI the same run passes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_pytest(tmp_path, **env) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("CI", "JAXGO_REQUIRE_DATA", "JAXGO_REQUIRE_TOOLS", "PYTEST_XDIST_WORKER")}
    environment.update(JAX_PLATFORMS="cpu", JAXGO_DATA=str(tmp_path / "no-data"), **env)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "tests/test_cli.py::test_unknown_command"],
                          cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)


def test_ci_without_the_data_fails_the_run(tmp_path):
    for flag in ({"CI": "true"}, {"CI": "1"}, {"JAXGO_REQUIRE_DATA": "1"}):
        result = run_pytest(tmp_path, **flag)
        assert result.returncode == 3, (flag, result.stdout[-2000:])
        assert "shared data missing" in result.stdout + result.stderr


def test_outside_ci_the_same_run_passes(tmp_path):
    for flag in ({}, {"CI": "false"}, {"CI": "0"}):
        result = run_pytest(tmp_path, **flag)
        assert result.returncode == 0, (flag, result.stdout[-2000:])


def test_ci_with_the_data_runs(tmp_path):
    for name in ("games", "problems", "rules"):
        (tmp_path / "no-data" / name).mkdir(parents=True)
    assert run_pytest(tmp_path, CI="true").returncode == 0
