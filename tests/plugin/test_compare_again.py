"""A failing check names the golden it compared with and the command that compares its kept
dump with it again; pasted, the command gives the same verdict line (audits 32 and 33 looked
for the golden among entries ``cache --entries`` lists alike, and a wrong pick was blamed on
float16)."""
import shlex

import pytest

pytest.importorskip("onnxruntime")


def test_the_printed_command_pasted_gives_the_checks_verdict(pytester, capsys):
    from pytest_ascend_accuracy.cli import main
    from pytest_ascend_accuracy.testing.models import save_models

    save_models(pytester.path / "models", ["overflow"])
    pytester.makepyfile("""
        from pytest_ascend_accuracy import accuracy

        @accuracy(threshold=0.99, per_op={"fc1/MatMul": 0.9})
        def test_overflow(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            inputs = accuracy_inputs("models/overflow.onnx", seed=0)
            check_accuracy(ascend_model("models/overflow.onnx").run(inputs),
                           golden_dump("models/overflow.onnx", inputs))
    """)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    verdict = next(line for line in result.stdout.lines if line.startswith("accuracy FAILED"))
    said = next(line for line in result.stdout.lines if "compare them again: " in line)
    argv = shlex.split(said.split("compare them again: ", 1)[1])
    assert argv[:2] == ["ascend-accuracy", "compare"] and "--om-json" in argv
    assert argv[argv.index("--threshold") + 1] == "0.99" and "--per-op" in argv
    capsys.readouterr()
    assert main(argv[1:]) == 1  # from where pytest ran, as printed
    assert capsys.readouterr().out.splitlines()[0] == verdict
