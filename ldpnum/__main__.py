"""``python -m ldpnum``: the command line (see :mod:`ldpnum.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
