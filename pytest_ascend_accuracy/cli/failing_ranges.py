"""The golden values past float16's range that the compare command's hint speaks of."""
from __future__ import annotations


def failing_ranges(golden, verdict, result, model):
    """The failing ops' golden operands past 65504, and those of ignored ops feeding them
    (``--ignore`` hid norm's 1e9 operand and the hint said "no float16 overflow seen", as
    ``assert_accuracy`` did before it), named as the model names its ops, with the golden
    values of the branch each failing If ran (the dump holds the If's outputs only:
    ``compare.branch_range``). ``model``: the stored golden's model, where it records one
    (None: the graph's edges are not known), as ``assert_accuracy`` reads them."""
    from ..compare.branch_range import failing_ops_and_branches, run_inside_ops
    from ..report.model_spelling import in_model_spelling

    types = {r.golden_name: r.op_type for r in result.rows if r.golden_name and r.op_type}
    ranges = failing_ops_and_branches(golden, verdict, result.rows,
                                      inside=run_inside_ops(result=result), model=model,
                                      op_types=types)
    # the golden's file names sanitise the model's op names (p2o_BatchNormalization_1): the
    # hint names ops as the model does, as the plugin's does (a pasted keep_dtype was refused)
    return in_model_spelling(ranges, result.rows)
