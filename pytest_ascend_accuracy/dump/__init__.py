"""Dump model, readers and writers (Ascend binary format, npy directories)."""
from .model import DumpSet, OpRecord, TensorRef  # noqa: F401
