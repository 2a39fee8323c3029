"""``jaxgo eval``: every evaluation tool is reached through the installed command, and scripts/ keeps only the
product scripts (the evaluation tools are package modules, the reproductions live under studies/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jaxgo.eval import cli

ROOT = Path(__file__).resolve().parents[2]


def jaxgo(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxgo", *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)


def test_help_lists_every_tool_and_each_tool_answers_its_own_help(capsys):
    listed = jaxgo("eval", "--help")
    assert listed.returncode == 0 and all(f"  {name} " in listed.stdout for name in cli.TOOLS)
    for name in cli.TOOLS:
        with pytest.raises(SystemExit) as exited:  # argparse's --help
            cli.main([name, "--help"])
        assert exited.value.code == 0 and capsys.readouterr().out.startswith(f"usage: jaxgo eval {name}")


def test_unknown_or_missing_tool_is_a_usage_error():
    assert jaxgo("eval").returncode == 2
    unknown = jaxgo("eval", "no-such-tool")
    assert unknown.returncode == 2 and "unknown tool 'no-such-tool'" in unknown.stderr


def test_strength_report_runs_through_the_command(tmp_path):
    log = tmp_path / "log.jsonl"
    rows = [{"strategy": "rave", "playouts": 1000, "time": None, "size": 9, "label": "", "jaxgo_won": won}
            for won in (True, True, False)]
    log.write_text("".join(json.dumps(row) + "\n" for row in rows))
    report = jaxgo("eval", "strength", "report", "--log", str(log))
    assert report.returncode == 0, report.stderr
    assert "| 9x9 | rave | 1000 playouts | 3 | 2 | 0.67 |" in report.stdout


def test_device_check_launcher_runs_from_scripts():
    launched = subprocess.run([sys.executable, str(ROOT / "scripts" / "device_check.py"), "--help"],
                              capture_output=True, text=True, timeout=120)
    assert launched.returncode == 0 and "usage: jaxgo eval device-check" in launched.stdout


def test_scripts_holds_only_the_product_scripts():
    assert sorted(p.name for p in (ROOT / "scripts").iterdir()) == [
        "device_check.py", "gpu_bench.sh", "main.sh", "pachi.sh", "setup.sh", "test.sh"]
