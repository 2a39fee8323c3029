"""Suite-wide checks.

``scripts/test.sh`` (what CI runs) sets ``JAXGO_REQUIRE_TOOLS=1``: then a missing GNU Go or a missing extra
(pgx, open_spiel, python-chess, selenium, hypothesis, katrain), Chromium or ChromeDriver, Node.js or Sabaki's GTP
library (tests/gtp/sabaki) stops the run with an error instead of letting the tests that need them skip,
so a broken install step can never hide behind a green run.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest


def pytest_sessionstart(session):
    if not os.environ.get("JAXGO_REQUIRE_TOOLS"):
        return
    from jaxgo.go.gtp_client import find_gnugo

    missing = [] if find_gnugo() else ["gnugo (apt-get install -y gnugo)"]
    missing += [f"{tool} (apt-get install -y {package})" for tool, package in
                (("chromium", "chromium"), ("chromedriver", "chromium-driver"), ("node", "nodejs"), ("npm", "npm"))
                if shutil.which(tool) is None]
    sabaki = Path(__file__).parent / "gtp" / "sabaki" / "node_modules" / "@sabaki" / "gtp"
    missing += [] if sabaki.is_dir() else ["@sabaki/gtp (npm ci in tests/gtp/sabaki)"]
    missing += [f"python package {name}" for name in ("pgx", "pyspiel", "chess", "sgfmill", "selenium", "hypothesis",
                                                      "katrain")
                if importlib.util.find_spec(name) is None]
    if missing:
        pytest.exit("required tools missing (scripts/setup.sh installs them): " + ", ".join(missing), returncode=3)
