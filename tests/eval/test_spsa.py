"""jaxgo/eval/spsa.py: parameter specs, Spall's gains, the ascent step, a resumable log and its report."""

from __future__ import annotations

import json

import numpy as np
import pytest

from jaxgo.eval import spsa
from support import fake_gtp_engine


def test_params_parse_and_map_to_units():
    linear = spsa.Param.parse("bias_c2=1.0:0:4:0.5")
    assert linear.to_unit(1.0) == 2.0 and linear.from_unit(2.0) == 1.0 and linear.from_unit(100) == 4.0
    log = spsa.Param.parse("rave_c3=1e-3:1e-5:1e-1:1:log")
    assert log.to_unit(1e-3) == pytest.approx(-3.0) and log.from_unit(-2.0) == pytest.approx(1e-2)
    assert log.from_unit(-9.0) == 1e-5  # clipped to LOW
    for bad in ("nonsense=1:0:2:1", "bias_c2=5:0:4:0.5", "bias_c2=1:0:4:0", "rave_c3=1:0:2:1:log", "bias_c2=1"):
        with pytest.raises(ValueError):
            spsa.Param.parse(bad)


def test_gains_follow_spalls_schedule_and_the_step_climbs_the_difference():
    a_k, c_k = spsa.gains(0, a=2.0, c=1.0, big_a=10.0)
    assert a_k == pytest.approx(2.0 / 11 ** 0.602) and c_k == 1.0
    assert spsa.gains(9, 2.0, 1.0, 10.0)[1] == pytest.approx(10 ** -0.101)
    theta, delta = np.array([0.0, 0.0]), np.array([1.0, -1.0])
    moved = spsa.step(theta, delta, score_plus=1.0, score_minus=0.0, a_k=0.5, c_k=1.0)
    assert moved.tolist() == [0.25, -0.25]  # towards theta + delta, the side that won
    assert spsa.step(theta, delta, 0.5, 0.5, 0.5, 1.0).tolist() == [0.0, 0.0]


def test_colour_decided_iterations_are_those_one_colour_won_outright():
    assert spsa.colour_decided(["B+Resign", "B+2.5"]) and spsa.colour_decided(["W+0.5", "W+Resign"])
    assert not spsa.colour_decided(["B+Resign", "W+Resign"]) and not spsa.colour_decided(["B+1.5"])
    assert not spsa.colour_decided(["0", "0"])  # draws: no colour won


def test_a_run_logs_every_iteration_resumes_and_reports(tmp_path, capsys):
    engine = fake_gtp_engine(tmp_path / "passer.py")  # passes every move: White wins on komi
    log = tmp_path / "spsa.jsonl"
    argv = ["--param", "bias_c2=1.0:0:4:0.5", "--param", "rave_c3=1e-3:1e-5:1e-1:1:log", "--size", "5",
            "--playouts", "10", "--engine", engine, "--log", str(log)]
    assert spsa.main(argv + ["--iterations", "1"]) == 0
    assert spsa.main(argv + ["--iterations", "2"]) == 0  # continues: one more iteration
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["iteration"] for r in records] == [0, 1]
    assert all(len(r["results"]) == 2 and r["score_plus"] == 0.5 for r in records)  # each side won as White
    assert records[1]["before"] == records[0]["after"] == records[0]["before"]  # a tie moves nothing
    assert "--search-option bias_c2=" in records[0]["plus"]
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["iterations"] == 2 and summary["games"] == 4 and summary["final"]["bias_c2"] == 1.0
    assert summary["steps_moved"] == {"bias_c2": 0.0, "rave_c3": 0.0} and summary["colour_decided"] == 2
    plot = tmp_path / "spsa.png"
    assert spsa.main(["--report", "--log", str(log), "--plot", str(plot)]) == 0 and plot.stat().st_size > 0
    assert spsa.main(argv[:2] + ["--log", str(log), "--iterations", "3"]) == 2  # other parameters: refused
