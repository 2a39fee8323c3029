"""The shared data folder: ``JAXGO_DATA``, else beside the checkout, else relative to the current directory."""

from pathlib import Path

import jaxgo
from jaxgo.util import paths


def test_environment_variable_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXGO_DATA", str(tmp_path))
    assert paths.data_dir() == tmp_path


def test_default_is_beside_the_checkout_or_relative(monkeypatch):
    monkeypatch.delenv("JAXGO_DATA", raising=False)
    beside = Path(jaxgo.__file__).resolve().parents[2] / "shared" / "data"
    expected = beside if beside.is_dir() else Path("..") / "shared" / "data"
    assert paths.data_dir() == expected
