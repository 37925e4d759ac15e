"""``python -m pytest_ascend_accuracy.cli``: the console script."""
import sys

from . import console_main

if __name__ == "__main__":
    sys.exit(console_main())
