"""Fixtures of the match runner's tests."""

from __future__ import annotations

import shlex

import pytest

from support import fake_gtp_engine


@pytest.fixture
def fake(tmp_path):
    """The command of ``support.FAKE_GTP_ENGINE`` in a genmove mode: pass, first, slow, garbage, crash, illegal."""
    path = fake_gtp_engine(tmp_path / "fake_engine.py")
    return lambda mode: f"{shlex.quote(path)} {mode}"
