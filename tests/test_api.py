"""The public API in ``jaxgo.__init__``: every name in ``__all__`` resolves, lazily."""

import subprocess
import sys

import jaxgo


def test_every_public_name_resolves():
    for name in jaxgo.__all__:
        assert getattr(jaxgo, name) is not None, name
    assert jaxgo.Player.__module__ == "jaxgo.search.player"
    assert jaxgo.SearchConfig().playout_policy == "heavy"


def test_import_jaxgo_does_not_import_jax():
    code = "import sys, jaxgo; print('jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
