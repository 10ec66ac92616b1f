"""``python -m ferromotion``: the same command line as ``ferromotion``."""

import sys

from ferromotion.cli import main

if __name__ == "__main__":
    sys.exit(main())
