"""A warning raised while a YAML suite's item runs names the suite file at the entry's line, as
a Python test's names the test's line (``core.caller_warning.warnings_at``): it named
``plugin/yaml_suite.py:470``, a line of this package (H101); found by a text search for the
entry's name, an entry named ``mlp`` after one named ``mlp_first`` got the first one's line
(H102)."""

SUITE = """defaults:
  threshold: 0.95
models:
  - name: mlp_first
    model: models/overflow.onnx
    modes: [high_precision]
  - name: mlp
    model: models/passing_mlp.onnx
    golden: golden/yaml_mlp
"""


def test_a_yaml_items_warning_names_the_suite_file_at_its_entry(pytester, models_dir):
    pytester.makefile(".yaml", accuracy_mlp=SUITE)
    pytester.runpytest("-p", "no:cacheprovider", "-k", "mlp and default")  # the golden: written
    # (a process of its own: in this one, this test's frame would be the user's frame found)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "mlp and default",
                                           "--accuracy-store-inputs")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*accuracy_mlp.yaml:7: UserWarning: --accuracy-store-inputs: "
                                 "the stored golden golden/yaml_mlp holds op outputs only*"])
    result.stdout.no_fnmatch_line("*yaml_suite.py*")
