"""numba's cache of the native package is dropped when any of its sources changes (numba keys each function's
cache by its own file only, so a caller could otherwise keep a stale copy of an edited callee)."""

from jaxgo.playouts.native import drop_stale_cache


def test_the_cache_goes_when_a_source_changes(tmp_path):
    (tmp_path / "board.py").write_text("x = 1\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    (cache / "board.play-1.py311.nbi").write_text("index")
    (cache / "board.play-1.py311.1.nbc").write_text("code")
    (cache / "board.cpython-311.pyc").write_text("bytecode")
    assert drop_stale_cache(tmp_path)  # no digest yet: whatever is there may be stale
    assert sorted(p.name for p in cache.iterdir()) == ["board.cpython-311.pyc", "native-sources.sha1"]
    (cache / "board.play-1.py311.nbi").write_text("index")
    assert not drop_stale_cache(tmp_path)  # same sources: kept
    assert (cache / "board.play-1.py311.nbi").exists()
    (tmp_path / "board.py").write_text("x = 2\n")
    assert drop_stale_cache(tmp_path) and not (cache / "board.play-1.py311.nbi").exists()


def test_the_search_and_server_caches_follow_every_module_their_code_calls():
    """The search's compiled rounds inline the descents of another module, the server's sums the search's backup:
    each package's cache digest covers its own modules and the native kernels."""
    from jaxgo.playouts.native import NATIVE_SOURCES
    from jaxgo.search.positions import SEARCH_SOURCES

    names = {path.name for path in SEARCH_SOURCES}
    assert {"descent.py", "round_step.py", "round_batch.py", "backup.py", "expansion.py"} <= names
    assert {path.name for path in NATIVE_SOURCES} >= {"board.py", "heavy.py", "light.py"}
