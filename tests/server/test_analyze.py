"""``jaxgo analyze GAME.sgf --plot OUT.png`` and ``jaxgo serve`` argument handling."""

import json

import pytest

from jaxgo.server import analyze, cli

# A 5x5 game written for this test: Black takes the centre and the top, White the bottom-left.
GAME = "(;GM[1]FF[4]SZ[5]KM[0.5];B[cc];W[cd];B[dd];W[bc];B[bb];W[de];B[ed];W[ce];B[cb])"


# The engine's default search is heavy playouts + progressive bias; the tests ask for the light one (fast to compile).
LIGHT = ["--playout-policy", "light", "--bias", "0", "--leaves", "8", "--max-boards", "256"]


def test_analyze_writes_the_plot_and_responses_with_progress(tmp_path, capsys):
    sgf = tmp_path / "game.sgf"
    sgf.write_text(GAME)
    plot, raw = tmp_path / "game.png", tmp_path / "game.json"
    code = analyze.main([str(sgf), "--plot", str(plot), "--visits", "32", "--moves", "0,4,9", "--json", str(raw),
                         "--window", "4", *LIGHT])
    assert code == 0
    assert plot.stat().st_size > 10_000 and plot.read_bytes()[:4] == b"\x89PNG"
    results = json.loads(raw.read_text())
    assert [r["turnNumber"] for r in results] == list(range(10))
    for r in results:
        assert 0 <= r["rootInfo"]["winrate"] <= 1 and len(r["ownership"]) == 25
        assert r["searchConfig"]["playout_policy"] == "light" and r["searchConfig"]["bias_c2"] == 0
    # After 9 moves the centre stone C3 (row 2, column 2) is Black's in most playouts.
    assert results[-1]["ownership"][2 * 5 + 2] > 0.3
    captured = capsys.readouterr()
    assert "analysed 10 positions" in captured.out
    assert "analyze" in captured.err and "10/10 turns" in captured.err and "320/320" in captured.err  # tqdm bar
    # The HTML report: the same figure embedded, and one table row per position with the move played.
    page = tmp_path / "game.html"
    assert analyze.main([str(sgf), "--plot", str(page), "--visits", "16", "--no-progress", *LIGHT]) == 0
    text = page.read_text()
    assert "data:image/png;base64," in text and text.count("<tr>") == 1 + 10 and "<td>B C3</td>" in text
    assert capsys.readouterr().err == ""


def test_komi_written_times_50_or_100_is_read_as_meant(tmp_path):
    assert analyze.plausible_komi(7.5) == 7.5 and analyze.plausible_komi(-150) == -150
    assert analyze.plausible_komi(375) == 7.5  # Fox: 3.75 stones = 7.5 points, written x100
    assert analyze.plausible_komi(650) == 6.5 and analyze.plausible_komi(-325) == -6.5
    assert analyze.plausible_komi(600) == 6  # no half-integer reading: the integer one, x100 before x50
    with pytest.raises(ValueError, match="--komi"):
        analyze.plausible_komi(377)
    sgf = tmp_path / "fox.sgf"
    sgf.write_text(GAME.replace("KM[0.5]", "KM[375]"))
    query, size = analyze.game_query(str(sgf), 16, "chinese")
    assert size == 5 and query["komi"] == 7.5
    query, _ = analyze.game_query(str(sgf), 16, "chinese", komi=6.5, settings={"playout_policy": "light"})
    assert query["komi"] == 6.5 and query["overrideSettings"] == {"reportAnalysisWinratesAs": "BLACK",
                                                                  "playouts_per_visit": 1, "playout_policy": "light"}


def test_analyze_options_are_checked_before_any_search(tmp_path, capsys):
    sgf = tmp_path / "game.sgf"
    sgf.write_text(GAME.replace("KM[0.5]", "KM[377]"))
    assert analyze.main([str(sgf), "--plot", str(tmp_path / "x.png")]) == 1
    assert "give the komi with --komi" in capsys.readouterr().err
    assert analyze.main([str(sgf), "--plot", str(tmp_path / "x.png"), "--search-option", "nonsense=1"]) == 2
    assert "unknown field" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        analyze.main([str(sgf), "--plot", str(tmp_path / "x.png"), "--komi", "375"])
    assert info.value.code == 2 and "--komi must be in" in capsys.readouterr().err
    capsys.readouterr()
    args = analyze.parse_args([str(sgf), "--plot", "x.png", "--playouts", "rules", "--visits", "64"])  # old spelling
    assert analyze.search_settings(args) == {"playout_policy": "rules"} and args.visits == 64
    assert "--playouts is deprecated" in capsys.readouterr().err


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


# -- issue 47: outputs checked before the analysis, FIFOs, long records, a clean exit -------------------------
def run_analyze(*args, timeout=600):
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(repo))
    return subprocess.run([sys.executable, "-m", "jaxgo", "analyze", *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=timeout)


def test_an_unsupported_report_format_is_refused_before_the_analysis(tmp_path, capsys, monkeypatch):
    sgf = tmp_path / "game.sgf"
    sgf.write_text(GAME)
    monkeypatch.setattr(analyze, "run_query", lambda *a, **k: pytest.fail("the analysis ran"))
    assert analyze.main([str(sgf), "--plot", str(tmp_path / "OUT.txt"), *LIGHT]) == 2
    assert "name it OUT.png" in capsys.readouterr().err
    assert analyze.main([str(sgf), "--plot", str(tmp_path / "missing" / "OUT.png"), *LIGHT]) == 2
    assert "cannot write into" in capsys.readouterr().err


def test_a_report_folder_gets_the_report_inside_it(tmp_path, capsys):
    sgf = tmp_path / "game.sgf"
    sgf.write_text(GAME)
    out = tmp_path / "reports"
    out.mkdir()
    assert analyze.main([str(sgf), "--plot", str(out), "--visits", "8", "--no-progress", *LIGHT]) == 0
    written = out / "game.png"
    assert written.read_bytes()[:4] == b"\x89PNG" and not (tmp_path / "reports.png").exists()
    assert f"report in {written}" in capsys.readouterr().out


def test_a_fifo_record_is_refused_at_once(tmp_path, capsys):
    import os

    fifo = tmp_path / "x.sgf"
    os.mkfifo(fifo)
    assert analyze.main([str(fifo), "--plot", str(tmp_path / "x.png")]) == 1
    assert "not a regular file" in capsys.readouterr().err


def test_a_record_longer_than_the_protocol_allows_is_refused_and_the_process_exits_cleanly(tmp_path):
    """A record of more than 1,500 moves: the refusal, then exit status 1 (before: a crash at interpreter exit,
    134 or 139, with the engine's device thread still in native code)."""
    moves = "".join(";B[]" if i % 2 == 0 else ";W[]" for i in range(1600))
    sgf = tmp_path / "long.sgf"
    sgf.write_text(f"(;GM[1]FF[4]SZ[9]KM[7.5]{moves})")
    proc = run_analyze(sgf, "--plot", tmp_path / "long.png", "--no-progress", *LIGHT)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "more than 1500 moves (at most 1500 moves are read)" in proc.stderr and "FATAL" not in proc.stderr


def test_analyze_exits_with_status_0_after_an_analysis(tmp_path):
    sgf = tmp_path / "game.sgf"
    sgf.write_text(GAME)
    proc = run_analyze(sgf, "--plot", tmp_path / "game.png", "--visits", "8", "--no-progress", *LIGHT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "report in" in proc.stdout and (tmp_path / "game.png").stat().st_size > 0


def test_a_full_disk_gives_a_clear_error_and_no_partial_report(tmp_path, capsys):
    """ENOSPC while the report is written: one line saying so, exit status 1, no half-written file."""
    import os
    import subprocess

    sgf = tmp_path / "game.sgf"
    sgf.write_text(GAME)
    full = tmp_path / "full"
    full.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(full)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        code = analyze.main([str(sgf), "--plot", str(full / "game.png"), "--visits", "8", "--no-progress", *LIGHT])
        assert code == 1
        assert "No space left on device" in capsys.readouterr().err
        assert os.listdir(full) == []  # neither the report nor its temporary file
    finally:
        subprocess.run(["umount", str(full)], check=False)
