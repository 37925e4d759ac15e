"""AIPP (ATC ``--insert_op_conf``): read the real file, apply it as the device does, and check
it against the reference network's own pre-processing (step 5 of the debugging flow).

Layer: imports ``core``, ``errors``, ``dump``, ``graph``, ``compare`` only.
"""
from .agreement import Agreement, compare_preprocessed
from .apply import apply_aipp, apply_aipp_image
from .check import PreprocessingCheck, check_preprocessing
from .config import AippConfig, AippOp, parse_aipp_config, read_aipp_config
from .mistakes import FieldFix

__all__ = ["AippConfig", "AippOp", "Agreement", "FieldFix", "PreprocessingCheck", "apply_aipp",
           "apply_aipp_image", "check_preprocessing", "compare_preprocessed", "parse_aipp_config",
           "read_aipp_config"]
