"""A key given twice in a baseline file is an error naming the file, the line and the key: YAML
readers keep the last value silently (``{cosine: 1.0, cosine: 0.5}`` was judged as 0.5, a second
``backend:`` line replaced the first, a second ``ops: []`` emptied the file's operator lines)."""
import pytest

from pytest_ascend_accuracy.baseline.cases import recorded_case
from pytest_ascend_accuracy.baseline.check import UNREADABLE, check_baseline
from pytest_ascend_accuracy.baseline.file import read_baseline
from pytest_ascend_accuracy.core.regen import Regen
from pytest_ascend_accuracy.core.safe_yaml import load_yaml
from pytest_ascend_accuracy.errors import ConfigError
from test_baseline_helpers import HEADER, SPEC, make_result

RELU = '- {op: "relu1", slot: "output:0", cosine: 1.000000,'


def _written(tmp_path):
    """The baseline of ``make_result()`` as the check writes it."""
    path = tmp_path / "default.yaml"
    check_baseline(make_result(), path, header=HEADER, inputs=SPEC)  # missing: written
    return path, path.read_text()


def _line_of(text, start):
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith(start))


def test_a_key_twice_in_one_op_line_names_the_file_line_and_key(tmp_path):
    path, text = _written(tmp_path)
    path.write_text(text.replace(RELU, RELU + " cosine: 0.5,"))
    with pytest.raises(ConfigError) as err:
        read_baseline(path)
    line = _line_of(text, RELU)
    assert str(err.value) == (f"{path}: line {line}: key 'cosine' given twice in one mapping "
                              "(on the same line); YAML would keep the last value (the one "
                              "read before this was checked) silently: remove one")


@pytest.mark.parametrize("which", ["first", "second"])
def test_an_environment_key_twice_names_both_lines_and_removing_one_reads(tmp_path, which):
    path, text = _written(tmp_path)
    doubled = text.replace('environment:\n', 'environment:\n  backend: "ascend"\n', 1)
    path.write_text(doubled)
    with pytest.raises(ConfigError) as err:
        read_baseline(path, shown="tests/baselines/default.yaml")
    first = _line_of(doubled, '  backend: "ascend"')
    assert err.value.where == "tests/baselines/default.yaml"
    assert err.value.problem.startswith(f"line {first + 1}: key 'backend' given twice in one "
                                        f"mapping (first on line {first})")
    # the advice, applied: either line removed, the file reads again
    lines = doubled.splitlines(True)
    del lines[first - 1 if which == "first" else first]
    path.write_text("".join(lines))
    assert read_baseline(path).environment["backend"] == ("emulator" if which == "first"
                                                          else "ascend")


def test_a_second_top_level_ops_list_is_refused_not_read_as_empty(tmp_path):
    path, text = _written(tmp_path)
    path.write_text(text + "ops: []\n")
    with pytest.raises(ConfigError, match=r"line %d: key 'ops' given twice in one mapping "
                                          r"\(first on line %d\)"
                                          % (len(text.splitlines()) + 1, _line_of(text, "ops:"))):
        read_baseline(path)


def test_the_case_of_a_file_with_a_doubled_inputs_key_is_not_read_from_its_last_value(tmp_path):
    path, text = _written(tmp_path)
    assert recorded_case(path) == "seed0"
    path.write_text(text.replace("  seed: 0\n", "  seed: 0\n  seed: 7\n"))
    assert recorded_case(path) is None  # unreadable: the check reads it and says why
    with pytest.raises(ConfigError, match="key 'seed' given twice"):
        read_baseline(path)


def test_the_check_fails_on_it_and_accuracy_regen_rewrites_it(tmp_path):
    path, text = _written(tmp_path)
    path.write_text(text.replace(RELU, RELU + " cosine: 0.5,"))
    with pytest.raises(ConfigError, match="key 'cosine' given twice"):
        check_baseline(make_result(), path, header=HEADER, inputs=SPEC)
    outcome = check_baseline(make_result(), path, header=HEADER, inputs=SPEC,
                             regen=Regen.FAILING)
    assert outcome.status == UNREADABLE and not outcome.passed
    assert "key 'cosine' given twice" in outcome.message
    assert path.read_text() == text
    assert check_baseline(make_result(), path, header=HEADER, inputs=SPEC).passed


@pytest.mark.parametrize("doc, value", [
    ("base: &b {x: 1}\nuse:\n  <<: *b\n  x: 2\n", {"x": 2}),  # a merge key overrides: YAML's own
    ("m: {1: a, '1': b}\n", {1: "a", "1": "b"}),  # two keys once loaded
    ("a: &s {k: 1}\nb: *s\n", {"k": 1}),  # an alias is checked once, and is no duplicate
])
def test_what_is_no_duplicate_key(doc, value):
    data = load_yaml(doc, "x.yaml", unique_keys=True)
    assert data[list(data)[-1]] == value


def test_without_unique_keys_the_last_value_is_kept_as_yaml_does():
    assert load_yaml("a: 1\na: 2\n", "x.yaml") == {"a": 2}
    with pytest.raises(ConfigError, match=r"^x.yaml: line 2: key 'a' given twice"):
        load_yaml("a: 1\na: 2\n", "x.yaml", unique_keys=True)


@pytest.mark.parametrize("loader", ["SafeLoader", "CSafeLoader"])
@pytest.mark.parametrize("first, second", [
    ("1", "0x1"), ("true", "True"), ("on", "yes"), ("1", "1.0"), ("true", "1"), ("null", "~"),
    ("1.0", "1.00"), (".nan", ".NaN"), ("2001-12-14", "2001-12-14"),
])
def test_keys_spelt_differently_that_load_as_one_are_refused(first, second, loader):
    """Compared as spelt, each of these loaded silently keeping the last value: as Python keys
    (the document YAML builds) they are one, as 1 == 1.0 == True (and PyYAML's .nan is one
    object)."""
    yaml = pytest.importorskip("yaml")
    cls = getattr(yaml, loader, None)
    if cls is None:
        pytest.skip("PyYAML without libyaml")
    doc = f"m: {{{first}: a, {second}: b}}\n"
    assert len(yaml.load(doc, Loader=cls)["m"]) == 1  # what YAML itself makes of it
    spelt = "" if first == second else f", as {first!r}: one key once loaded"
    with pytest.raises(ConfigError) as err:
        load_yaml(doc, "x.yaml", loader=cls, unique_keys=True)
    assert str(err.value) == (f"x.yaml: line 1: key {second!r} given twice in one mapping (on "
                              f"the same line{spelt}); YAML would keep the last value (the "
                              "one read before this was checked) silently: remove one")


ANCHORS = "a: &a {x: 1, y: 1}\nb: &b {x: 2, z: 2}\n"


@pytest.mark.parametrize("merges", ["m: {<<: *a, <<: *b}\n", "m:\n  <<: *a\n  w: 0\n  <<: *b\n"])
def test_a_second_merge_key_is_refused_and_the_printed_fix_loads_the_first_listed(merges):
    """``<<`` twice: which one wins where both give a key (x) differs between PyYAML versions
    (6.0.3: the last, x: 2; 6.0.4: the first, x: 1). The fix printed, one list listing first
    the one whose values win, loads those values whatever PyYAML is installed."""
    with pytest.raises(ConfigError) as err:
        load_yaml(ANCHORS + merges, "x.yaml", unique_keys=True)
    assert err.value.problem.startswith("line ") and err.value.problem.endswith(
        "key '<<' given twice in one mapping (" + ("on the same line" if "{" in merges else
                                                   "first on line 4") +
        "); which one wins differs between YAML readers and versions: merge them into one list, "
        "<<: [...], listing first the one whose values win (as the merge spec has it)")
    fixed = merges.replace("<<: *a, <<: *b", "<<: [*b, *a]").replace(
        "  <<: *a\n  w: 0\n  <<: *b\n", "  <<: [*b, *a]\n  w: 0\n")
    assert load_yaml(ANCHORS + fixed, "x.yaml", unique_keys=True)["m"]["x"] == 2


@pytest.mark.parametrize("doc, want", [
    # the first listed wins, for any key (6.0.4 kept the last for 'threshold', the first for 't')
    ("a: &a {threshold: 1, y: 1}\nb: &b {threshold: 2, z: 2}\nm: {<<: [*a, *b]}\n",
     {"threshold": 1, "y": 1, "z": 2}),
    ("a: &a {t: 1}\nb: &b {t: 2}\nm: {<<: [*a, *b]}\n", {"t": 1}),
    # a merged mapping's own override survives a second merge (6.0.4: y 0.9, a review)
    ("o: &o {y: 0.9}\ns: &s {<<: *o, y: 0.999}\nm: {<<: *s}\n", {"y": 0.999}),
    ("a: &a {x: 1}\nm: {x: 5, <<: *a}\n", {"x": 5}),  # own keys win wherever they stand
])
def test_merges_load_as_the_merge_spec_says_whatever_pyyaml_is_installed(doc, want):
    assert load_yaml(doc, "x.yaml", unique_keys=True)["m"] == want
    assert load_yaml(doc, "x.yaml")["m"] == want


@pytest.mark.parametrize("doc", [
    "m: {'<<': 1, <<: {x: 1}}\n",  # a quoted << is a string key, not a merge
    "m: {1: a, '1': b, 1.5: c, '1.5': d, 'true': f, null: g, '': h, 2001-12-14: i}\n",
    "m: {'2001-12-14': a, 2001-12-14: b, 2001-12-14 00:00:00: c}\n",  # str, date, datetime
    "m: {name: a, =: 1}\n",  # a '=' key (tag value) loads as the string '=' (a review)
])
def test_keys_that_load_as_different_python_keys_are_no_duplicates(doc):
    yaml = pytest.importorskip("yaml")
    assert load_yaml(doc, "x.yaml", unique_keys=True) is not None
    assert len(load_yaml(doc, "x.yaml")["m"]) == len(yaml.safe_load(doc)["m"])


def test_a_key_spelled_equals_given_twice_is_refused():
    with pytest.raises(ConfigError, match="key '=' given twice in one mapping"):
        load_yaml("m: {=: 1, '=': 2}\n", "x.yaml", unique_keys=True)
