"""The playout benchmark and the demo, run as a user runs them (subprocesses, JSON lines)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

KEYS = {"system", "device", "devices", "size", "batch", "compile_s", "playouts_per_s", "moves_per_s",
        "mean_moves", "black_win_rate"}


def run_jaxgo(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    return subprocess.run([sys.executable, "-m", "jaxgo", *args], capture_output=True, text=True, env=env,
                          timeout=timeout, check=True)


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


@pytest.mark.slow
def test_bench_playouts_prints_one_json_line_per_configuration():
    out = run_jaxgo("bench", "playouts", "--size", "5", "--batch", "32", "64", "--repeats", "1", "--json",
                    "--backend", "xla").stdout
    records = json_lines(out)
    assert [(r["system"], r["size"], r["batch"]) for r in records] == [("jaxgo", 5, 32), ("jaxgo", 5, 64)]
    for record in records:
        assert set(record) == KEYS | {"backend", "policy", "lanes", "kernel"} and record["backend"] == "xla"
        assert record["kernel"] == "light" and record["lanes"] == "default"  # the CPU's XLA light kernel
        assert record["device"] == "cpu" and record["devices"] >= 1
        assert record["playouts_per_s"] > 0 and record["compile_s"] >= 0
        assert 10 < record["mean_moves"] <= 75  # 5x5 light playouts, capped at 3 * 25 moves
        assert record["moves_per_s"] == pytest.approx(record["playouts_per_s"] * record["mean_moves"], rel=0.02)


def test_bench_playouts_native_by_default_on_a_cpu_with_policies_and_threads():
    out = run_jaxgo("bench", "playouts", "--size", "9", "--batch", "64", "--policy", "light", "heavy",
                    "--threads", "1", "2", "--repeats", "1", "--json").stdout
    records = json_lines(out)
    assert [(r["policy"], r["threads"]) for r in records] == [("light", 1), ("light", 2), ("heavy", 1), ("heavy", 2)]
    for record in records:
        assert record["backend"] == "native" and KEYS <= set(record)
        assert record["playouts_per_s"] > 0 and record["cpu_playouts_per_s"] > 0
        assert 60 < record["mean_moves"] <= 243 and 0.2 < record["black_win_rate"] < 0.8


@pytest.mark.slow
@pytest.mark.parametrize("fresh_build", [False, True], ids=["cached", "fresh"])
def test_bench_compares_with_libego_or_says_why_not(tmp_path, fresh_build):
    """Against Libego built once into its default cache folder (~/.cache/jaxgo/libego: the build takes most of a
    minute); ``-m slow`` builds it afresh in an empty folder."""
    folder = ["--libego-dir", str(tmp_path / "libego")] if fresh_build else []
    out = run_jaxgo("bench", "playouts", "--size", "9", "--batch", "200", "--threads", "1", "--repeats", "1",
                    "--compare", "libego", *folder, "--json", timeout=900)
    records = {r["system"]: r for r in json_lines(out.stdout)}
    from jaxgo.playouts.bench import libego

    if not (libego.source_dir() / "build.sh").is_file():
        assert "Libego skipped" in out.stderr and set(records) == {"jaxgo"}
        return
    assert set(records) == {"jaxgo", "libego", "ratio"}, out.stderr
    assert records["libego"]["playouts_per_s"] > 0 and 100 < records["libego"]["mean_moves"] < 125
    assert records["ratio"]["ratio_vs_libego"] == pytest.approx(
        records["jaxgo"]["cpu_playouts_per_s"] / records["libego"]["playouts_per_s"], rel=0.01)


@pytest.mark.skipif(importlib.util.find_spec("pgx") is None or importlib.util.find_spec("pyspiel") is None,
                    reason="the `compare` extra (pgx, open_spiel) is not installed; scripts/setup.sh installs it")
@pytest.mark.slow
def test_bench_compare_times_the_peers_in_the_same_run():
    """Both peers against the default native backend in one run (issue 61: with the native backend, the CPU
    default, --compare pgx printed no peer row at all)."""
    out = run_jaxgo("bench", "playouts", "--size", "9", "--batch", "16", "--threads", "1", "--repeats", "1",
                    "--compare", "pgx,openspiel", "--openspiel-seconds", "0.5", "--json").stdout
    records = {r["system"]: r for r in json_lines(out)}
    assert set(records) == {"jaxgo", "pgx", "openspiel", "ratio"} and records["jaxgo"]["backend"] == "native"
    for peer in ("pgx", "openspiel"):
        assert set(records[peer]) == KEYS and records[peer]["playouts_per_s"] > 0
    ratio = records["ratio"]
    assert ratio["jaxgo_backend"] == "native"
    assert ratio["ratio_vs_pgx"] == pytest.approx(
        records["jaxgo"]["playouts_per_s"] / records["pgx"]["playouts_per_s"], rel=0.01)
    assert ratio["ratio_vs_openspiel"] == pytest.approx(
        records["jaxgo"]["playouts_per_s"] / records["openspiel"]["playouts_per_s"], rel=0.01)


def test_bench_rejects_an_unknown_peer():
    """(In this process: the refusal is the command line's, and ``sys.exit`` with a message is status 1.)"""
    from jaxgo import cli

    with pytest.raises(SystemExit) as refused:
        cli.main(["bench", "playouts", "--size", "5", "--batch", "8", "--compare", "gnugo"])
    assert refused.value.code not in (0, None) and "unknown peer" in str(refused.value.code)


def test_demo_game_prints_a_board_and_a_result():
    out = run_jaxgo("demo", "--no-bench", "--size", "5", "--playouts", "4", "--max-moves", "12").stdout
    assert "A B C D E" in out
    assert "12 moves" in out or "resign" in out.lower() or "moves in" in out
    assert "Tromp-Taylor result" in out


def test_bench_without_a_name_is_a_usage_error_as_jaxgo_is(capsys):
    from jaxgo import bench, cli

    assert bench.main([]) == 2 and cli.main([]) == 2
    assert "playouts" in capsys.readouterr().err
    assert bench.main(["nosuch"]) == 2 and bench.main(["--help"]) == 0
    assert "playouts" in capsys.readouterr().out


def test_cli_help_lists_the_commands():
    out = run_jaxgo("--help").stdout
    for command in ("demo", "bench", "gtp"):
        assert command in out


def test_bench_search_reports_search_and_raw_throughput_at_the_same_batch():
    out = run_jaxgo("bench", "search", "--size", "5", "--playouts", "64", "--leaves", "8",
                    "--playouts-per-leaf", "2", "--strategies", "rave", "--repeats", "1").stdout
    records = json_lines(out)
    raw = [r for r in records if r["bench"] == "raw_playouts"]
    searches = [r for r in records if r["bench"] == "search"]
    assert len(raw) == 1 and raw[0]["batch"] == 16 and raw[0]["playouts_per_s"] > 0
    assert [r["position"] for r in searches] == ["empty", "move20"]
    for record in searches:
        assert record["batch"] == 16 and record["playouts_per_s"] > 0
        # the ratio is printed to 3 decimals: within 0.0005 of the rates' quotient, whatever its size
        assert record["ratio"] == pytest.approx(record["playouts_per_s"] / raw[0]["playouts_per_s"], rel=0.01, abs=6e-4)
        assert record["tree_nodes"] > 1


@pytest.mark.slow
def test_bench_search_with_the_engine_defaults_sets_it_against_raw_heavy_playouts():
    out = run_jaxgo("bench", "search", "--size", "5", "--playouts", "32", "--leaves", "4",
                    "--playouts-per-leaf", "2", "--strategies", "rave", "--repeats", "1", "--defaults").stdout
    records = json_lines(out)
    assert [r["bench"] for r in records] == ["raw_playouts", "search", "search"]
    raw = records[0]
    assert raw["policy"] == "heavy" and raw["backend"] == "native" and raw["batch"] == 8
    for record in records[1:]:
        assert record["config"] == "defaults" and record["batch"] == 8 and record["playouts_per_s"] > 0
        assert record["raw_playouts_per_s"] == raw["playouts_per_s"]
        # printed to 3 decimals, as above: within 0.0005 of the rates' quotient, whatever its size
        assert record["ratio"] == pytest.approx(record["playouts_per_s"] / raw["playouts_per_s"], rel=0.01, abs=6e-4)
        assert record["tree_nodes"] > 1
