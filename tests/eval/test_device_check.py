"""jaxgo/eval/device_check.py (run as scripts/device_check.py): playout-by-playout comparison of two devices (here
both the CPU)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from jaxgo.eval import device_check as check


def test_compare_marks_each_playout_that_differs_anywhere():
    a = {"winner": np.array([1, -1, 1]), "score": np.array([2.5, -1.5, 0.5]),
         "ownership": np.zeros((3, 4), np.int8)}
    b = {name: value.copy() for name, value in a.items()}
    b["ownership"][2, 3] = 1  # one point of the third playout
    assert check.compare(a, b).tolist() == [True, True, False]
    b["score"][0] = 3.5
    assert check.compare(a, b).tolist() == [False, True, False]


# The default run checks one policy (the light kernel's lane independence for each kernel is in
# tests/playouts/xla/test_light.py); ``-m slow`` runs the tool over three.
@pytest.mark.parametrize("policies", [["light"], pytest.param(["light", "light_wide", "rules"],
                                                               marks=pytest.mark.slow)], ids=["light", "three"])
def test_a_run_on_one_device_prints_identical_playouts(capsys, policies):
    assert check.main(["--size", "7", "--batch", "24", "--lanes", "5", "--policies", *policies]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["policy"], r["size"]) for r in records] == [(policy, 7) for policy in policies]
    for record in records:
        assert record["same_device"] and record["device"] == "cpu"
        # lanes 5 against the CPU run's 256: the playouts do not depend on the lanes
        assert record["lanes"] == [5, 256]
        assert record["identical_playouts"] == 24 and record["identical_fraction"] == 1.0
        assert record["mean_moves"][0] == record["mean_moves"][1] > 0
