"""`ascend-accuracy compare` of a first failure after a TopK whose differing indices all reorder
near ties gives the plugin's advice for it, spelled for the command line (``cli.selection_hint``).
It read "no op list is known to fix it; ascend-accuracy diagnose ... finds one by running" (the
plugin's hint before c754991), and that diagnosis keeps every op in float32 (T2's Faster R-CNN).
Now it gives the ``--ignore`` flags that judge the rest, added to the compare as it ran, and,
for the ops after the TopK whose values leave float16's range, the ``diagnose`` command that
checks their keep_dtype list beside those flags. Each is pasted as printed: the flags make the
compare pass, the command says PASSES with exit status 0, and without the flags it fails at the
first failure, as the hint says. Against a stored golden of op outputs only, whose TopK is fed
the values it ranks from the model its record names (``golden.stored_topk_inputs``)."""
import re
import shlex

import pytest

from pytest_ascend_accuracy.cli import app as cli

pytest.importorskip("onnxruntime")

from near_tie_detector import near_tie_detector  # noqa: E402

FLAGS = re.compile(r"to judge the rest, add to this command ((?:--ignore \S+ ?)+), which "
                   r"ignore the 3 ops after it \(every failing op is among them\); that hides")
COMMAND = re.compile(r"check both on the ONNX model the dump ran: (ascend-accuracy diagnose .+?) "
                     r"passes with exit status 0")


@pytest.fixture
def pair(tmp_path):
    from pytest_ascend_accuracy.testing.emulated_pair import emulated_pair

    return emulated_pair(tmp_path, near_tie_detector(), name="det")


def _hint(argv, capsys) -> str:
    assert cli.main(argv) == 1
    out = capsys.readouterr().out
    assert "accuracy FAILED: 3 of 8 tensors fail cosine >= 0.99; first failure in graph order: " \
           "gather (#4)" in out, out
    return next(line for line in out.splitlines() if line.startswith("next step: "))


def test_the_printed_ignore_flags_added_to_the_compare_make_it_pass(pair, capsys):
    argv = pair.compare_argv() + ["--threshold", "0.99"]
    hint = _hint(argv, capsys)
    assert hint.startswith("next step: the first failing op gather comes after topk:output:1, "
                           "a selection (TopK) whose differing indices all reorder ties or near "
                           "ties"), hint
    assert "no op list is known to fix it" not in hint
    flags = FLAGS.search(hint)
    assert flags, hint
    assert shlex.split(flags.group(1)) == ["--ignore", "gather", "--ignore", "area",
                                           "--ignore", "side"]
    assert cli.main(argv + shlex.split(flags.group(1))) == 0
    assert capsys.readouterr().out.startswith("accuracy PASSED")


def test_the_printed_keep_dtype_command_passes_with_the_flags_and_fails_at_gather_without(
        pair, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # (the command names the model relative to where compare ran)
    hint = _hint(pair.compare_argv() + ["--threshold", "0.99"], capsys)
    assert ("a float16 problem of their own after the selection, which the ignore hides and "
            "which does not cause the first failure (pasted alone, the check still fails at "
            "gather)") in hint, hint
    command = COMMAND.search(hint)
    assert command, hint
    argv = shlex.split(command.group(1))[1:]  # as typed, less the console script's name
    assert argv == ["diagnose", "det.onnx", "--mode", '{keep_dtype: ["area", "side"]}',
                    "--threshold", "0.99", "--ignore", "gather", "--ignore", "area",
                    "--ignore", "side"], argv
    cache = ["--cache-dir", str(pair.cache.root)]
    assert cli.main(argv + cache) == 0
    assert capsys.readouterr().out.startswith("ascend-accuracy diagnosis of det: PASSES\n")
    alone = argv[:6] + cache + ["--budget", "1"]  # the keep_dtype list without the flags
    cli.main(alone)
    assert ("step 1 keep_dtype(area,side) [keep_dtype(area,side)]: FAILED | fails at op gather "
            "(cosine") in capsys.readouterr().out


def test_a_saved_result_judged_again_keeps_the_generic_hint(pair, tmp_path, capsys):
    """``judge`` reads a compare.json, which holds no golden tensors: nothing tells what comes
    after a selection, so its hint is the one it gave before (no flags it cannot check)."""
    saved = tmp_path / "r.json"
    assert cli.main(pair.compare_argv() + ["--threshold", "0.99", "--json", str(saved)]) == 1
    capsys.readouterr()
    assert cli.main(["judge", str(saved)]) == 1
    out = capsys.readouterr().out
    assert "first failure in graph order: gather (#4)" in out
    assert "add to this command" not in out


def test_entries_the_compare_ignores_already_are_not_printed_again(pair, capsys):
    argv = pair.compare_argv() + ["--threshold", "0.99", "--ignore", "gather"]
    assert cli.main(argv) == 1
    hint = next(line for line in capsys.readouterr().out.splitlines()
                if line.startswith("next step: "))
    flags = re.search(r"add to this command ((?:--ignore \S+ ?)+), which", hint)
    assert flags and shlex.split(flags.group(1)) == ["--ignore", "area", "--ignore", "side"]
    assert cli.main(argv + shlex.split(flags.group(1))) == 0
