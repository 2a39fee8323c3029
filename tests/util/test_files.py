"""Atomic writes: the new contents appear whole, a failure mid-write leaves the old file, no temporary is left."""

import json

import numpy as np
import pytest

from jaxgo.util import files


def _only(folder, name):
    assert sorted(p.name for p in folder.iterdir()) == [name]


def test_bytes_text_and_json_replace_the_file(tmp_path):
    path = tmp_path / "out.bin"
    files.atomic_write_bytes(path, b"old")
    files.atomic_write_bytes(path, b"new")
    assert path.read_bytes() == b"new"
    _only(tmp_path, "out.bin")
    text = tmp_path / "out.txt"
    files.atomic_write_text(text, "d\u00e9j\u00e0 vu")
    assert text.read_text(encoding="utf-8") == "d\u00e9j\u00e0 vu"
    manifest = tmp_path / "manifest.json"
    files.write_json_atomic(manifest, {"shards": [1, 2]})
    assert json.loads(manifest.read_text()) == {"shards": [1, 2]}
    assert manifest.read_text() == json.dumps({"shards": [1, 2]}, indent=1)


def test_npy_and_npz_keep_the_name_and_the_arrays(tmp_path):
    npy = tmp_path / "codes.npy"
    files.save_npy_atomic(npy, np.arange(6, dtype=np.uint32).reshape(2, 3))
    assert np.array_equal(np.load(npy), np.arange(6).reshape(2, 3)) and np.load(npy).dtype == np.uint32
    odd = tmp_path / "state.bin"  # no suffix is added, unlike np.save / np.savez on a path
    files.save_npy_atomic(odd, np.ones(2))
    assert odd.exists()
    for compressed in (False, True):
        npz = tmp_path / f"state-{compressed}.npz"
        files.save_npz_atomic(npz, {"alpha": np.ones(3), "format": np.int32(2)}, compressed=compressed)
        with np.load(npz) as data:
            assert sorted(data.files) == ["alpha", "format"] and int(data["format"]) == 2
    assert not list(tmp_path.glob("*.tmp"))
    assert np.load(npy).tobytes() == np.arange(6, dtype=np.uint32).tobytes()


class Boom(RuntimeError):
    pass


def test_a_failure_mid_write_leaves_the_old_file(tmp_path):
    path = tmp_path / "state.npz"
    files.save_npz_atomic(path, {"x": np.arange(3)})
    before = path.read_bytes()

    class Exploding:
        def __array__(self, dtype=None, copy=None):
            raise Boom("half way")

    with pytest.raises(Boom):
        files.save_npz_atomic(path, {"x": np.arange(5), "y": Exploding()})
    assert path.read_bytes() == before
    with pytest.raises(Boom):
        with files.atomic_open(path) as fh:
            fh.write(b"partial")
            raise Boom("interrupted")
    assert path.read_bytes() == before
    _only(tmp_path, "state.npz")


def test_a_missing_folder_raises_and_creates_nothing(tmp_path):
    with pytest.raises(FileNotFoundError):
        files.atomic_write_text(tmp_path / "missing" / "out.txt", "x")
    assert list(tmp_path.iterdir()) == []
