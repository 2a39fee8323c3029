"""``jaxgo.server.host_cost``: the clocks and the call counter of ``jaxgo bench serve --host-only``."""

import threading
import time

import numpy as np

from jaxgo.search import backup
from jaxgo.server import compiled_snapshot, host_cost, round_sums  # noqa: F401 (round_sums: its kernel)


def _on_thread(name: str, work) -> None:
    thread = threading.Thread(target=work, name=name)
    thread.start()
    thread.join()


def test_kernel_clock_times_the_watched_threads_calls_and_puts_the_kernels_back():
    original = compiled_snapshot.weighted_score
    arrays = (np.zeros(3), np.ones(3), 0.0)
    original(*arrays)  # compiled before the clock wraps it
    watched = []
    clock = None

    def work():
        watched.append(threading.get_ident())
        while clock is None:
            time.sleep(0.001)
        for _ in range(5):
            compiled_snapshot.weighted_score(*arrays)

    thread = threading.Thread(target=work, name="device-test")
    thread.start()
    while not watched:
        time.sleep(0.001)
    clock = host_cost.KernelClock(idents=watched)
    assert "weighted_score" in clock.kernels and "backup_round" in clock.kernels
    for called_by_compiled_code in ("best_line", "backup_batch", "_descend_rows"):  # never wrapped
        assert called_by_compiled_code not in clock.kernels
    assert compiled_snapshot.weighted_score is not original
    thread.join()
    compiled_snapshot.weighted_score(*arrays)  # an unwatched thread: not counted
    assert clock.calls == 5 and clock.seconds >= 0.0
    clock.close()
    assert compiled_snapshot.weighted_score is original and isinstance(backup.backup_batch, type(original))


def test_thread_clock_counts_the_engine_threads_cpu_time():
    clock = host_cost.ThreadClock()
    seconds = []
    stop = threading.Event()
    ready = threading.Event()

    def spin():
        ready.set()
        began = time.thread_time()
        while time.thread_time() - began < 0.05:
            pass
        seconds.append(clock.seconds())
        stop.wait(5)

    thread = threading.Thread(target=spin, name="tree-test")
    thread.start()
    ready.wait()
    clock.mark()
    while not seconds:
        time.sleep(0.005)
    stop.set()
    thread.join()
    assert 0.02 < seconds[0] < 1.0


def test_call_counter_counts_python_calls_of_threads_started_while_open():
    def nothing():
        pass

    counter = host_cost.CallCounter()
    counts = []
    try:
        def work():
            for _ in range(100):
                nothing()
            counts.append(counter.calls(("device-count",)))

        _on_thread("device-count", work)
    finally:
        counter.close()
    assert 100 <= counts[0] < 200  # the 100 calls, and the counter's own look-up of the thread
    assert host_cost.per_leaf(1.5e-6 * 10, 10) == 1.5
