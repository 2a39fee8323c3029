"""``jaxgo analyze GAME.sgf --plot OUT.png`` and ``jaxgo serve`` argument handling."""

import json

import pytest

from jaxgo.server import analyze, cli

# A 5x5 game written for this test: Black takes the centre and the top, White the bottom-left.
GAME = "(;GM[1]FF[4]SZ[5]KM[0.5];B[cc];W[cd];B[dd];W[bc];B[bb];W[de];B[ed];W[ce];B[cb])"


def test_analyze_writes_the_plot_and_responses(tmp_path, capsys):
    sgf = tmp_path / "game.sgf"
    sgf.write_text(GAME)
    plot, raw = tmp_path / "game.png", tmp_path / "game.json"
    code = analyze.main([str(sgf), "--plot", str(plot), "--visits", "32", "--moves", "0,4,9", "--json", str(raw),
                         "--leaves", "8", "--max-boards", "256"])
    assert code == 0
    assert plot.stat().st_size > 10_000 and plot.read_bytes()[:4] == b"\x89PNG"
    results = json.loads(raw.read_text())
    assert [r["turnNumber"] for r in results] == list(range(10))
    for r in results:
        assert 0 <= r["rootInfo"]["winrate"] <= 1 and len(r["ownership"]) == 25
    # After 9 moves the centre stone C3 (row 2, column 2) is Black's in most playouts.
    assert results[-1]["ownership"][2 * 5 + 2] > 0.3
    assert "analysed 10 positions" in capsys.readouterr().out


def test_analyze_reports_a_broken_file(tmp_path, capsys):
    bad = tmp_path / "bad.sgf"
    bad.write_text("(;GM[1]SZ[5];B[cc];W[c")
    assert analyze.main([str(bad), "--plot", str(tmp_path / "x.png")]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_serve_help_documents_the_transports(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for word in ("--tcp", "--unix", "--http", "stdin", "query_version", "terminate", "maxVisits"):
        assert word in text
    assert cli.main(["--leaves", "0"]) == 2
