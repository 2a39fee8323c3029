"""``jaxgo eval analysis``: KaTrain-style queries to ``jaxgo serve`` and the issue's analysis targets."""

import argparse
import json

import pytest

from jaxgo.data import split
from jaxgo.eval import analysis
from jaxgo.go.coords import gtp_to_point


def test_parse_config():
    assert analysis.parse_config("defaults=") == ("defaults", {})
    assert analysis.parse_config("large=prior_model=large,bias_c2=1.5") == (
        "large", {"prior_model": "large", "bias_c2": 1.5})
    for bad in ("=x=1", "name=novalue"):
        with pytest.raises(argparse.ArgumentTypeError):
            analysis.parse_config(bad)


def test_policy_rank_counts_higher_entries():
    policy = [0.0] * 362
    policy[gtp_to_point("Q16", 19)] = 0.2
    policy[gtp_to_point("R16", 19)] = 0.1
    policy[gtp_to_point("K10", 19)] = 0.3
    assert analysis.policy_rank(policy, analysis.CORNER_4_4) == 2
    assert analysis.policy_rank(policy, analysis.CORNER_3_4) == 3
    flat = [0.01] * 361 + [0.0]  # ties outside the group rank before it
    assert analysis.policy_rank(flat, analysis.CORNER_4_4) == 361 - 3


def test_summary_checks_the_targets():
    def row(position, winrate, lead):
        return {"position": position, "winrate": winrate, "scoreLead": lead, "seconds": 1.0}

    rows = [row("empty", 0.52, 1.0), row("open:4-4", 0.5, 0.5), row("open:3-4", 0.45, -3.0),
            row("open:5-4", 0.5, 0.0), row("fox:a@30", 0.7, -2.0)]
    policy = [0.0] * 362
    for vertex, value in (("D4", 0.1), ("C4", 0.05)):
        policy[gtp_to_point(vertex, 19)] = value
    out = analysis.summary("x", rows, policy)
    assert out["empty_within_3"] and out["policy_rank"] == {"4-4": 1, "3-4": 2} and out["policy_top5"]
    assert out["opening_loss"] == {"4-4": 0.5, "3-4": 4.0, "5-4": 1.0} and not out["openings_within_3"]
    assert out["sign_agreement"] == "4/5"


@pytest.mark.slow
@pytest.mark.skipif(not split.heldout_archives(which="fox"), reason="no ../shared/data (CI requires it)")
def test_runs_against_the_server(tmp_path, capsys):
    out = tmp_path / "analysis.jsonl"
    assert analysis.main(["--visits", "16", "--fox", "1", "--config", "large=prior_model=large",
                          "--out", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    positions = [line["position"] for line in lines if "position" in line]
    assert positions[:4] == ["empty", "open:4-4", "open:3-4", "open:5-4"] and len(positions) == 6
    final = lines[-1]
    assert final["summary"] and final["config"] == "large" and final["policy_rank"]["4-4"] == 1
    assert all(line["visits"] >= 16 for line in lines if "position" in line)
    assert capsys.readouterr().out.count("\n") == len(lines)


def test_the_trust_run_maps_leads_back_only_for_a_calibrated_server():
    from jaxgo.eval.analysis import server_estimate
    from jaxgo.server.engine_config import EngineConfig

    assert server_estimate([]) == EngineConfig.score_estimate
    assert server_estimate(["--seed", "2", "--score-estimate", "calibrated"]) == "calibrated"
    assert server_estimate(["--score-estimate=mean"]) == "mean"
