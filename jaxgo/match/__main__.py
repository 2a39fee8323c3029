"""``python -m jaxgo.match``: the same as ``jaxgo match`` (used where a child process must run this interpreter)."""

import sys

from jaxgo.match.cli import main

sys.exit(main())
