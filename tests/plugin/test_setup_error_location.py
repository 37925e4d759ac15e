"""A package error raised while a fixture sets up is one paragraph, and names where the user's
code raised it: the test's line, else the innermost line of a conftest.py or helper (a review:
the paragraph dropped the conftest/helper location pytest's traceback had shown)."""


def test_a_conftest_fixtures_refusal_names_the_helper_line(pytester):
    pytester.makepyfile(helpers="""
        def make_model(ascend_model):
            return ascend_model("chian.onnx")  # a typo
    """)
    pytester.makeconftest("""
        import pytest
        from helpers import make_model

        @pytest.fixture
        def om(ascend_model):
            return make_model(ascend_model)
    """)
    pytester.makepyfile(test_s="""
        def test_x(om):
            pass
    """)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(errors=1)
    lines = result.stdout.lines
    at = lines.index(next(line for line in lines if "ERROR at setup of test_x" in line))
    assert lines[at + 1].startswith("ascend-accuracy configuration error: ascend_model: ONNX "
                                    "model 'chian.onnx' not found")
    assert lines[at + 3] == "helpers.py:2: ConfigError"
    assert "INTERNALERROR" not in result.stdout.str()
