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
    # among the members (and its golden), the first listed wins, as among globs (a PP-OCR
    # trial: the golden's member won whatever the order)
    members = ("p2o.Conv.2p2o.Mul.6p2o.Add.10", "p2o.Add.10", "p2o.Conv.2", "p2o.Mul.6",
               "p2o.Add.10", "p2o.Conv.2p2o.Mul.6p2o.Add.10:output:0")
    assert Policy.build(0.95, {"p2o.Conv.2": 0.5, "p2o.Add.10": 0.99}).threshold_for(
        members).value == 0.5
    assert Policy.build(0.95, {"p2o.Add.10": 0.99, "p2o.Conv.2": 0.5}).threshold_for(
        members).value == 0.99
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
    assert merged.per_op == (("*", 0.4), ("fc", 0.1), ("*conv*", 0.9))
    # the call site's globs come first, so they win over the marker's (a review)
    head = make_spec(threshold=0.95, per_op={"*": 0.5}).merged(per_op={"head*": 0.99})
    policy = Policy.build(head.threshold, dict(head.per_op))
    assert policy.threshold_for(("head/fc", "head/fc", "head/fc:output:0")).value == 0.99


def test_no_passing_threshold_where_the_scale_guard_fails_the_op_too():
    """compare.json's ``passing_threshold`` is a promise: judged at it, the check passes. An op
    3x too small with cosine 0.4 fails the scale guard at any threshold (a docs trial pasted
    the figure and still failed)."""
    import numpy as np

    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.dump.model import DumpSet, OpRecord, TensorRef

    rng = np.random.default_rng(0)
    g = rng.standard_normal(64).astype(np.float32)
    a = (0.6 * g + rng.standard_normal(64).astype(np.float32)) / 3

    def dump(v):
        return DumpSet([OpRecord(name="norm", op_type="BatchNormalization", order=0,
                                 outputs=(TensorRef.from_array(v),))])

    result = compare_dumps(dump(a), dump(g))
    guarded = result.judge(0.95, scale_tolerance=2)
    assert guarded.passing_threshold is None
    assert not result.judge(guarded.failures[0].would_pass, scale_tolerance=2).passed
    loose = result.judge(0.95)  # without the guard the figure is a promise kept
    assert result.judge(loose.passing_threshold).passed


def test_a_fused_ops_name_where_it_is_not_fused_says_to_name_a_member():
    """A marker shared by a fusing and a non-fusing mode: the fused name offered tensor names
    ('p2o.Conv.22:output:0') that the fusing mode then refused (a PP-OCR trial)."""
    import pytest

    from pytest_ascend_accuracy.errors import ConfigError
    from pytest_ascend_accuracy.graph.op_catalogue import check_setting_names

    names = ["p2o.Conv.2", "p2o.Conv.2:output:0", "p2o.Mul.6", "p2o.Add.10", "p2o.Conv.22",
             "p2o.Conv.22:output:0"]
    with pytest.raises(ConfigError, match=r"is the name of a fused op, which the dumps do not "
                                          r"have \(their mode does not fuse it\): name a member, "
                                          r"e\.g\. 'p2o\.Conv\.2'"):
        check_setting_names({"p2o.Conv.2p2o.Mul.6p2o.Add.10": 0.9}, [], names, "the dumps", "x")
    with pytest.raises(ConfigError) as exc:
        check_setting_names({"p2o.Conv.3": 0.9}, [], names, "the dumps", "x")
    assert ":output:" not in str(exc.value)


def test_the_closest_names_of_an_op_are_ops_not_its_input_tensors():
    """'bn11' was offered 'bn1:input:1', which the plugin then refused (op inputs are not
    compared by it; a docs trial)."""
    import pytest

    from pytest_ascend_accuracy.errors import ConfigError
    from pytest_ascend_accuracy.graph.op_catalogue import check_setting_names

    with pytest.raises(ConfigError) as exc:
        check_setting_names({"bn11": 0.9}, [], ["bn1", "bn1:input:1", "bn1:output:0", "bn2"],
                            "the dumps", "per_op")
    assert ":input:" not in str(exc.value) and "closest: 'bn1'" in str(exc.value)


def test_a_members_tensor_label_wins_over_a_members_plain_name_whatever_the_order():
    # a trial: under fusion the label relu1:output:0 (which names that tensor in every mode)
    # lost to 'relu1' listed first, so one marker gave the tensor two thresholds by mode: a
    # false pass at 0.5 where the label asked 0.99
    cbr = ("conv1relu1", "relu1", "conv1", "bn1", "relu1", "relu1:output:0",
           "conv1relu1:output:0")
    for per_op in ({"relu1": 0.5, "relu1:output:0": 0.99},
                   {"relu1:output:0": 0.99, "relu1": 0.5}):
        assert Policy.build(0.95, per_op).threshold_for(cbr).value == 0.99
        unfused = ("relu1", "relu1", "relu1", "relu1:output:0")
        assert Policy.build(0.95, per_op).threshold_for(unfused).value == 0.99
