"""Builds the three optional C extensions, compare/_pair_sums.c (see compare/pair_sums.py),
compare/_tiny_pass.c (see compare/tiny_values.py) and dump/_channel_blocks.c (see
dump/channel_blocks.py); the project's metadata is in
pyproject.toml. ``optional=True``: where no C compiler can build one (or the compiler is not
GCC/Clang-like), the install succeeds without it and numpy does that work instead."""
from setuptools import Extension, setup

setup(ext_modules=[Extension(
    "pytest_ascend_accuracy.compare._pair_sums",
    sources=["pytest_ascend_accuracy/compare/_pair_sums.c"],
    depends=["pytest_ascend_accuracy/compare/_pair_sums_kl.h"],
    # IEEE NaN/Inf semantics (the C file refuses -ffast-math); contraction off: every instruction
    # set (target_clones) then gives the same bits
    extra_compile_args=["-O3", "-fno-fast-math", "-ffp-contract=off", "-Wno-psabi"],
    optional=True,
), Extension(
    "pytest_ascend_accuracy.compare._tiny_pass",
    sources=["pytest_ascend_accuracy/compare/_tiny_pass.c"],
    # double sums of products as written (no fused multiply-adds), as _pair_sums
    extra_compile_args=["-O3", "-fno-fast-math", "-ffp-contract=off"],
    optional=True,
), Extension(
    "pytest_ascend_accuracy.dump._channel_blocks",
    sources=["pytest_ascend_accuracy/dump/_channel_blocks.c"],
    extra_compile_args=["-O3"],
    optional=True,
)])
