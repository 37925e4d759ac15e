"""The high-precision step of a diagnosis failing at an If names the Cube ops of the branch the
golden ran (audit B finding 7: silero_vad.onnx with sr=16000 ran its then branch, and the step
named the else branch's Convs, both branches' Cube ops in file order); where the golden holds
neither branch's ops, it says they are those of either branch."""
from types import SimpleNamespace

from pytest_ascend_accuracy.triage.branch_keep import BranchOps
from pytest_ascend_accuracy.triage.hp_wording import high_precision_fails

BRANCH = BranchOps(entries=("OpType::MatMulV2",), count=2, owners=("gate",),
                   cube=(("gate", "If_0_else_branch__Inline_0__/stft/Conv"),
                         ("gate", "If_0_then_branch__Inline_0__/stft/Conv")))
ROW = SimpleNamespace(label="gate", op_type="If", metrics=None, golden_dtype="float32")
VERDICT = SimpleNamespace(first=SimpleNamespace(row=ROW))


class _Golden:
    def __init__(self, names):
        self.names = set(names)

    def get(self, name):
        return object() if name in self.names else None


def test_the_taken_branch_s_cube_ops_are_named():
    run = SimpleNamespace(golden=_Golden({"If_0_then_branch__Inline_0___stft_Conv"}), model=None)
    text = high_precision_fails(VERDICT, BRANCH, run)
    assert "whose taken branch runs Cube ops (If_0_then_branch__Inline_0__/stft/Conv)" in text
    assert "else_branch" not in text, text


def test_without_the_branch_in_the_golden_either_one_is_said():
    run = SimpleNamespace(golden=_Golden(()), model=None)
    text = high_precision_fails(VERDICT, BRANCH, run)
    assert ("whose branches run Cube ops (If_0_else_branch__Inline_0__/stft/Conv, "
            "If_0_then_branch__Inline_0__/stft/Conv, either one)") in text, text
