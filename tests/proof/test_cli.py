"""``jaxgo solve``: files that are not regression files end in one line and exit 1, and --help describes the
command and its ``mine`` and ``learn`` subcommands (issue 61)."""

import pytest

from jaxgo.proof.cli import main


def test_a_missing_file_a_folder_and_an_sgf_are_one_line_errors(tmp_path, capsys):
    record = tmp_path / "game.sgf"
    record.write_text("(;GM[1]SZ[9];B[ee])")
    for path, reason in ((tmp_path / "nonexistent.tst", "cannot read"), (tmp_path, "is a folder"),
                         (record, "holds no attack/defend test")):
        assert main([str(path)]) == 1
        err = capsys.readouterr().err
        assert err.startswith("jaxgo solve: ") and reason in err and err.count("\n") == 1, err


def test_help_describes_the_command_and_names_mine_and_learn(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    out = capsys.readouterr().out
    assert info.value.code == 0 and "jaxgo solve mine" in out and "jaxgo solve learn" in out
    assert "--max-nodes" in out and "node budget" in out


def test_a_regression_file_still_runs(capsys):
    from pathlib import Path

    tst = Path(__file__).parents[1] / "fixtures" / "proof_mini.tst"
    assert main([str(tst), "--limit", "1", "--max-nodes", "50"]) == 0
    assert "plain tests" in capsys.readouterr().out
