"""The ``ascend-accuracy`` console script: ``main`` parses and dispatches subcommands.

``app`` holds the command registry and the ``compare`` subcommand; each further subcommand
lives in its own module (``judge``, ``diagnose``, ...) and registers itself. Top layer, beside
``plugin``: it may import any library layer, never ``plugin`` and never pytest.
"""
from .app import main  # noqa: F401
from .warning_lines import plain_warnings


def console_main() -> int:
    """The console script (and ``python -m pytest_ascend_accuracy.cli``): ``main()`` with each
    warning printed as one plain line (``warning_lines``)."""
    with plain_warnings():
        return main()
