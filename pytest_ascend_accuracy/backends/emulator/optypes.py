"""ONNX operator types -> the Ascend IR types ATC gives them (dump file names, om json).

The table lives in ``core.ascend_optypes`` (one table, cited there): the emulator types its ops
with it, and ``keep_dtype`` entries ``OpType::X`` are stored in that Ascend spelling, so the
keep_dtype file the emulator reads is the one ATC reads.
"""
from __future__ import annotations

from ...core.ascend_optypes import (ASCEND_TYPES, ascend_type, node_ascend_type,  # noqa: F401
                                    node_parser_type, parser_type)
