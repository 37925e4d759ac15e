"""Builds the one optional C extension, compare/_pair_sums.c (see compare/pair_sums.py); the
project's metadata is in pyproject.toml. ``optional=True``: where no C compiler can build it
(or the compiler is not GCC/Clang-like), the install succeeds without it and the compare uses
its numpy kernel."""
from setuptools import Extension, setup

setup(ext_modules=[Extension(
    "pytest_ascend_accuracy.compare._pair_sums",
    sources=["pytest_ascend_accuracy/compare/_pair_sums.c"],
    # IEEE NaN/Inf semantics (the C file refuses -ffast-math); contraction off: every instruction
    # set (target_clones) then gives the same bits
    extra_compile_args=["-O3", "-fno-fast-math", "-ffp-contract=off", "-Wno-psabi"],
    optional=True,
)])
