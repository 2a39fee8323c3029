"""``jaxgo cgt`` command line (jaxgo.cgt.cli)."""

import json

from jaxgo.cgt.cli import main


def test_toy_json(capsys):
    assert main(["toy", "--json", "--episodes", "400", "--epochs", "2"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["configurations"] == 45
    assert 0 <= res["hotstrat_optimal"] <= 45
    assert res["temperature_error_max"] >= 0
    assert isinstance(res["td_lambda_oscillates"], bool)
    assert res["principal_variation"]["score"] == 2.0


def test_thermograph_command(capsys):
    assert main(["thermograph", "{3 | {0 | -6}}", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["temperature"] == 3.0 and rows[0]["shape"] == "sente (Right)"
