import sys

from jaxgo.cli import main

sys.exit(main())
