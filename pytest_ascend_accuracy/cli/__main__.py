"""``python -m pytest_ascend_accuracy.cli``: the console script."""
import sys

from .app import main

if __name__ == "__main__":
    sys.exit(main())
