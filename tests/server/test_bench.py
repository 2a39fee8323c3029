"""``jaxgo bench serve``: the throughput lines (one per device count with `--devices`) and the memory footprint
line (tiny settings)."""

import json

import pytest

from jaxgo.server import bench


def test_bench_serve_prints_a_throughput_line(capsys):
    assert bench.main(["--clients", "2", "--size", "5", "--visits", "32", "--queries", "1", "--leaves", "8",
                       "--max-boards", "64", "--repeats", "1"]) == 0
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert record["clients"] == 2 and record["queries"] == 2 and record["playouts_per_s"] > 0


@pytest.mark.slow
def test_bench_serve_memory_prints_the_footprint(capsys):
    assert bench.main(["--memory", "--size", "5", "--leaves", "8", "--max-boards", "64", "--seconds", "1",
                       "--tree-mb", "0.05"]) == 0
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert record["many_turns_answered"] == 1501 and record["tree_capped"]
    assert record["rss_idle_mb"] > 0 and record["rss_peak_long_mb"] >= record["rss_idle_mb"] * 0.5


def test_bench_serve_refuses_devices_that_do_not_divide_the_device_batch(capsys):
    assert bench.main(["--devices", "1", "3", "--device-batch", "64"]) == 2
    assert "divide --device-batch" in capsys.readouterr().err


@pytest.mark.slow
def test_bench_serve_prints_one_line_per_device_count(capfd):
    assert bench.main(["--devices", "1", "2", "--clients", "2", "--size", "5", "--visits", "32", "--queries", "1",
                       "--leaves", "8", "--device-batch", "64", "--repeats", "1"]) == 0
    records = [json.loads(line) for line in capfd.readouterr().out.strip().splitlines()]
    assert [(r["devices"], r["device_batch"]) for r in records] == [(1, 64), (2, 64)]
    assert all(r["playouts_per_s"] > 0 and r["queries_per_s"] > 0 for r in records)


@pytest.mark.slow
def test_first_analysis_probe_times_a_fresh_server_process():
    from jaxgo.server import probes

    record = probes.first_analysis(5, 7, 8, ["--playout-policy", "light", "--bias", "0", "--device-batch", "64"])
    assert record["exit_status"] == 0
    for key in ("first_after_start_s", "second_query_s", "first_after_size_change_s", "second_after_size_change_s"):
        assert record[key] > 0, record
    print(record)


def test_slope_of_the_memory_samples():
    from jaxgo.server.probes import slope

    assert slope([(0, 10.0), (60, 10.5), (120, 11.0)]) * 600 == 5.0
    assert slope([(0, 3.0), (1, 3.0)]) == 0.0 and slope([(5, 1.0), (5, 2.0)]) == 0.0


def test_refused_bench_clients_fail_the_run_instead_of_going_uncounted():
    # A server full at 2 connections refuses the third client: the pass raises rather than timing the others.
    from jaxgo.search.config import SearchConfig
    from jaxgo.server import transports
    from jaxgo.server.engine import AnalysisEngine
    from jaxgo.server.engine_config import EngineConfig

    engine = AnalysisEngine(EngineConfig(search=SearchConfig(playout_policy="light", leaves_per_batch=8),
                                         max_boards=64, buckets=(64,))).start()
    server = transports.TcpServer(engine, 0, limits=transports.ConnectionLimits(max_connections=2))
    transports.start_in_thread(server)
    try:
        with pytest.raises(RuntimeError, match="benchmark queries failed"):
            bench.run_clients(f"tcp:127.0.0.1:{server.server_address[1]}", 4, 1, 5, 16)
    finally:
        server.shutdown()
        server.server_close()
        engine.stop(wait=False, timeout=30)


def test_bench_serve_host_only_times_the_tree_work_alone(capsys):
    assert bench.main(["--host-only", "--tree-threads", "2", "--clients", "4", "--size", "5", "--visits", "64",
                       "--queries", "1", "--leaves", "8", "--max-boards", "64", "--repeats", "1"]) == 0
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert record["host_only"] and record["tree_threads"] == 2
    assert record["queries"] == 4 and record["playouts_per_s"] > 0
    # the host's cost: CPU time of the engine's threads, the nogil kernels' share of it, Python calls
    assert 0 < record["host_nogil_us_per_leaf"] < record["host_cpu_us_per_leaf"]
    assert record["host_gil_us_per_leaf"] == pytest.approx(
        record["host_cpu_us_per_leaf"] - record["host_nogil_us_per_leaf"], abs=0.02)
    assert record["python_calls_per_leaf"] > 0 and record["kernel_calls_per_leaf"] > 0
