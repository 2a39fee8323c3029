"""Suite-wide checks.

``scripts/test.sh`` (what CI runs) sets ``JAXGO_REQUIRE_TOOLS=1``: then a missing GNU Go or a missing extra
(pgx, open_spiel, python-chess, selenium, hypothesis, katrain), Chromium or ChromeDriver, Node.js or Sabaki's GTP
library (tests/gtp/sabaki), Java or Lizzie's jar, or Pachi (built by scripts/pachi.sh when ../shared/peers/pachi
is there) stops the run with an error instead of letting the tests that need them skip, so a broken install step
can never hide behind a green run.

Under ``CI=true`` (or ``JAXGO_REQUIRE_DATA=1``) a missing shared data folder (``../shared/data`` or
``JAXGO_DATA``: game archives, regression suites) stops the run the same way: without it about half of the
default tests skip, and a run that skipped them must not count as green.  A fresh clone outside CI still runs
(the tests that need the data skip with the reason).

The tests compile through the ``jaxgo`` command's persistent XLA cache (``jaxgo.util.jitcache``: ``~/.cache/jaxgo/xla``
or ``JAXGO_CACHE_DIR``), so a second run on the same machine reuses the kernels the first compiled instead of
compiling them again in every worker; ``JAXGO_NO_CACHE=1`` runs cold.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

DATA_FOLDERS = ("games", "problems", "rules")  # what the data-dependent tests read under the data folder


def required(name: str) -> bool:
    """Whether an environment flag is set to something true (``CI=true``, ``CI=1``; not empty, 0, false, no)."""
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


def missing_data() -> list[str]:
    """The folders of the shared data that are not there (all of them when the data folder itself is missing)."""
    from jaxgo.util.paths import data_dir

    root = data_dir()
    return [str(root / name) for name in DATA_FOLDERS if not (root / name).is_dir()]


def pytest_configure(config):
    """Point JAX at the persistent compilation cache without importing it here (a run that never needs JAX, such
    as tests/test_suite_checks.py's, stays light): through the environment, which JAX reads when the test modules
    import it during collection, or through its configuration if it is already imported."""
    import sys

    from jaxgo.util import jitcache

    path = jitcache.cache_dir()
    if path is None:
        return
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    if "jax" in sys.modules:
        jitcache.configure(sys.modules["jax"], path)
        return
    ours = {"JAX_COMPILATION_CACHE_DIR": str(path), **jitcache.SETTINGS}
    # a variable the user set stays; one with our value came from this suite (an xdist worker inherits it)
    ADDED.update({name: value for name, value in ours.items() if os.environ.get(name, value) == value})
    os.environ.update(ADDED)


def pytest_collection_finish(session):
    """Take the cache variables out of the environment again once the test modules have imported JAX, so that
    the ``jaxgo`` subprocesses tests start choose their own cache (``jaxgo.util.jitcache``)."""
    for name, value in ADDED.items():
        if os.environ.get(name) == value:
            del os.environ[name]


ADDED: dict[str, str] = {}  # the variables pytest_configure put into the environment


def pytest_sessionstart(session):
    if required("CI") or required("JAXGO_REQUIRE_DATA"):
        missing = missing_data()
        if missing:
            pytest.exit("shared data missing (put the data folder at ../shared/data or set JAXGO_DATA): "
                        + ", ".join(missing), returncode=3)
    if not os.environ.get("JAXGO_REQUIRE_TOOLS"):
        return
    from jaxgo.go.gtp_client import find_gnugo

    missing = [] if find_gnugo() else ["gnugo (apt-get install -y gnugo)"]
    missing += [f"{tool} (apt-get install -y {package})" for tool, package in
                (("chromium", "chromium"), ("chromedriver", "chromium-driver"), ("node", "nodejs"), ("npm", "npm"),
                 ("java", "liblizzie-java"))
                if shutil.which(tool) is None]
    lizzie = Path(os.environ.get("JAXGO_LIZZIE_JAR", "/usr/share/java/lizzie.jar"))
    missing += [] if lizzie.is_file() else [f"{lizzie} (apt-get install -y liblizzie-java)"]
    sabaki = Path(__file__).parent / "gtp" / "sabaki" / "node_modules" / "@sabaki" / "gtp"
    missing += [] if sabaki.is_dir() else ["@sabaki/gtp (npm ci in tests/gtp/sabaki)"]
    from jaxgo.eval.series import find_pachi

    peers = Path(__file__).parent.parent.parent / "shared" / "peers" / "pachi"
    missing += [] if find_pachi() or not peers.is_dir() else ["Pachi (bash scripts/pachi.sh)"]
    missing += [f"python package {name}" for name in ("pgx", "pyspiel", "chess", "sgfmill", "selenium", "hypothesis",
                                                      "katrain")
                if importlib.util.find_spec(name) is None]
    if missing:
        pytest.exit("required tools missing (scripts/setup.sh installs them): " + ", ".join(missing), returncode=3)


@pytest.fixture
def small_disk(tmp_path):
    """A 24 KiB tmpfs at tmp_path / "disk", for the full-disk tests (a test may remount it larger); skipped where
    mounting is not allowed."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24k", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    yield disk
    subprocess.run(["umount", str(disk)], check=False)
