"""Core: what every layer uses. Atomic files, the content-addressed cache, conversion modes.

Lowest layer above ``errors``: it may import only the standard library, numpy, filelock and
``pytest_ascend_accuracy.errors``; nothing in the package below ``core`` exists, and ``core``
imports nothing above it (checked by import-linter, see ``docs/architecture.md``).
"""
