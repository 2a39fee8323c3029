"""Do the playouts give the same games on an accelerator as on the CPU?  (``jaxgo eval device-check``.)

    python scripts/device_check.py --size 9 19 --batch 4096

The check itself is jaxgo/eval/device_check.py; this launcher stays here because scripts/gpu_bench.sh and the
lent-GPU routine run it by this path.
"""

import sys

from jaxgo.eval.device_check import main

if __name__ == "__main__":
    sys.exit(main())
