"""Which per_op entry judges a row: the tensor's own key, then the row's names in order (the
dump op's own name first), then the first listed glob -- also through the marker's spec, which
keeps the order the user wrote (a user trial: a fused op's exact entry lost to its member's)."""
from pytest_ascend_accuracy.compare.thresholds import Policy
from pytest_ascend_accuracy.plugin.marker_spec import make_spec

# a fused op's row: its own name, its golden (the last member), its members, its tensor
FUSED = ("fc2/MatMul", "fc2/Add", "fc2/MatMul", "fc2/Add", "fc2/MatMul:output:0")


def test_a_fused_ops_own_name_wins_over_a_members_entry_whatever_the_order():
    for per_op in ({"fc2/MatMul": 0.95, "fc2/Add": 0.0}, {"fc2/Add": 0.0, "fc2/MatMul": 0.95}):
        assert Policy.build(0.95, per_op).threshold_for(FUSED).value == 0.95
    # a member alone still applies to the fused op (README: name a member)
    assert Policy.build(0.95, {"fc2/Add": 0.5}).threshold_for(FUSED).value == 0.5
    # the tensor's own key beats every op name
    assert Policy.build(0.95, {"fc2/MatMul": 0.9, "fc2/MatMul:output:0": 0.1}).threshold_for(
        FUSED).value == 0.1


def test_the_first_listed_glob_wins_also_through_the_marker():
    spec = make_spec(threshold=0.95, per_op={"*conv*": 0.9, "*": 0.5})
    assert [k for k, _ in spec.per_op] == ["*conv*", "*"]  # as written, not sorted
    policy = Policy.build(spec.threshold, dict(spec.per_op))
    assert policy.threshold_for(("blk/conv1", "blk/conv1", "blk/conv1:output:0")).value == 0.9
    assert policy.threshold_for(("relu", "relu", "relu:output:0")).value == 0.5
    merged = spec.merged(per_op={"*": 0.4, "fc": 0.1})
    assert merged.per_op == (("*conv*", 0.9), ("*", 0.4), ("fc", 0.1))
