"""scripts/gpu_bench.sh in its smoke mode (GPU_BENCH_SMOKE=1: every batch and lane count divided by ~16,384) on
the CPU: each step writes its JSON lines, tagged with the step, to bench.jsonl, and a step past the run's deadline
is skipped with a line in the log rather than failing the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_script(tmp_path, steps: str, seconds: int = 400) -> tuple[list[dict], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPU_BENCH")}
    env.update(GPU_BENCH_SMOKE="1", GPU_BENCH_ONLY=steps, GPU_BENCH_SECONDS=str(seconds), OUT=str(tmp_path),
               PYTHON=sys.executable, JAX_PLATFORMS="cpu")
    done = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_bench.sh")], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = (tmp_path / "bench.jsonl").read_text().splitlines() if (tmp_path / "bench.jsonl").exists() else []
    return [json.loads(line) for line in lines], (tmp_path / "log.txt").read_text()


@pytest.mark.slow
def test_smoke_run_prints_the_light_kernels_figures(tmp_path):
    records, log = run_script(tmp_path, "wide9-default light9-lanes")
    by_step = {}
    for record in records:
        by_step.setdefault(record["step"], []).append(record)
    assert sorted(by_step) == ["light9-lanes", "wide9-default"]
    assert by_step["light9-lanes"][0]["lanes"] == 16  # 262,144 / 16,384
    for record in records:
        assert record["system"] == "jaxgo" and record["backend"] == "xla" and record["policy"] == "light"
        assert record["batch"] == 64 and record["playouts_per_s"] > 0 and 80 < record["mean_moves"] < 140
    assert by_step["wide9-default"][0]["kernel"] == "light_wide"
    assert by_step["light9-lanes"][0]["kernel"] == "light"
    assert "## wide9-default: exit 0" in log and "## light9-lanes: exit 0" in log


def test_a_step_past_the_deadline_is_skipped(tmp_path):
    records, log = run_script(tmp_path, "wide9", seconds=5)
    assert records == [] and "## wide9: skipped (deadline)" in log


@pytest.mark.slow
def test_every_step_runs_in_smoke_mode(tmp_path):
    """All steps but pgx (an optional peer) and the GPU test run: each exits 0 and prints its lines."""
    steps = ("wide9 wide9-refill wide9-default wide9-big wide19 wide19-default check light9 light9-lanes "
             "light19-lanes heavy9-lanes heavy19-default search search-defaults serve serve-host1 serve-host0")
    records, log = run_script(tmp_path, steps, seconds=580)
    for step in steps.split():
        assert f"## {step}: exit 0" in log, log[-3000:]
    assert {r["step"] for r in records} >= set(steps.split()) - {"serve"}
