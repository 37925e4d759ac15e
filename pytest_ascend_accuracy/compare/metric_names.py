"""The metrics' names: what a threshold can judge and msaccucmp's CSV columns (no numpy here:
the xdist controller's summary judges thresholds' words without computing any metric)."""

#: metric names, in msaccucmp's CSV order, with their column names
METRIC_COLUMNS = {
    "cosine": "CosineSimilarity",
    "max_abs": "MaxAbsoluteError",
    "acc_rel": "AccumulatedRelativeError",
    "rel_l2": "RelativeEuclideanDistance",
    "kl": "KullbackLeiblerDivergence",
    "std": "StandardDeviation",
    "mean_abs": "MeanAbsoluteError",
    "rmse": "RootMeanSquareError",
    "max_rel": "MaxRelativeError",
    "mean_rel": "MeanRelativeError",
}
#: numeric metrics a threshold can judge; cosine is the only one where higher is better
JUDGEABLE = ("cosine", "rel_l2", "max_abs", "mean_abs", "rmse", "max_rel", "mean_rel",
             "acc_rel", "kl")
HIGHER_IS_BETTER = frozenset({"cosine"})

__all__ = ["METRIC_COLUMNS", "JUDGEABLE", "HIGHER_IS_BETTER"]
