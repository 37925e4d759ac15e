"""D6: hostile YAML (alias bombs, recursive aliases, runaway nesting) in a stored baseline or a
YAML suite fails fast with a ConfigError naming the file, before anything walks the document.
Before the bound, a nine-level bomb of 600 bytes hung validation and reached 2.27 GB."""
import pytest

from pytest_ascend_accuracy.baseline.file import read_baseline, render
from pytest_ascend_accuracy.baseline.writing import write_baseline
from pytest_ascend_accuracy.core.safe_yaml import check_yaml_bounds, load_yaml
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.plugin.yaml_suite import load_suite
from test_baseline_file import _baseline

pytestmark = pytest.mark.reliability


def bomb(levels=6, width=9, indent=""):
    """``levels`` anchors, each a list of ``width`` aliases of the one before: width**levels
    leaves once expanded (531,441 with the defaults), a few hundred bytes of text."""
    lines = [f'{indent}l0: &l0 [{", ".join(["lol"] * width)}]']
    for i in range(1, levels + 1):
        lines.append(f"{indent}l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_in_a_stored_baseline(tmp_path):
    path = write_baseline(tmp_path / "mlp" / "default.yaml", _baseline())
    text = path.read_text()
    path.write_text(text.replace("environment:", "info:\n" + bomb(indent="  ") + "environment:", 1))
    with pytest.raises(ConfigError) as err:
        read_baseline(path)
    assert err.value.where == str(path) and "alias bomb" in err.value.problem


def test_alias_bomb_in_a_yaml_suite(tmp_path):
    path = tmp_path / "accuracy_bomb.yaml"
    path.write_text(bomb() + "models:\n  - model: m.onnx\n    per_op: {x: *l6}\n")
    with pytest.raises(ConfigError) as err:
        load_suite(path)
    assert err.value.where == str(path) and "alias bomb" in err.value.problem


def test_too_many_aliases_even_when_small(tmp_path):
    text = "a: &a [1]\nb: [" + ", ".join(["*a"] * 1001) + "]\n"
    with pytest.raises(ConfigError, match="more than 1000 aliases"):
        load_yaml(text, "f.yaml")


def test_recursive_alias_is_refused():
    with pytest.raises(ConfigError, match="recursive"):
        load_yaml("a: &a [1, *a]\n", "f.yaml")


def test_runaway_nesting_is_refused():
    with pytest.raises(ConfigError, match="nested"):
        load_yaml("[" * 600 + "]" * 600, "f.yaml")
    with pytest.raises(ConfigError, match="deeper than 200"):
        load_yaml("[" * 300 + "]" * 300, "f.yaml")


def test_a_few_anchors_and_big_alias_free_files_are_fine():
    text = "d: &d {threshold: 0.9}\nm:\n" + "".join(f"  - {{<<: *d, n: {i}}}\n" for i in range(50))
    assert load_yaml(text, "f.yaml")["m"][49] == {"threshold": 0.9, "n": 49}
    big = [{"op": f"op{i}", "cosine": 1.0} for i in range(60_000)]  # 180,001 nodes, no alias
    assert check_yaml_bounds({"ops": big}, "f.yaml") == 180_002


def test_a_real_baseline_reads_back_unchanged(tmp_path):
    path = write_baseline(tmp_path / "b.yaml", _baseline())
    assert render(read_baseline(path)) == path.read_text()


def merge_bomb(levels=5, width=9):
    """Merge keys instead of lists: PyYAML's constructor copies every merged mapping's entries,
    width**levels * width of them, while the constructed document stays nine keys small."""
    lines = ["m0: &m0 {" + ", ".join(f"k{i}: {i}" for i in range(width)) + "}"]
    for i in range(1, levels + 1):
        lines.append(f"m{i}: &m{i} {{<<: [{', '.join([f'*m{i - 1}'] * width)}]}}")
    return "\n".join(lines) + "\n"


def test_merge_key_bomb_is_refused_before_construction(tmp_path):
    """Nine levels hung yaml.load itself (past 60 s, 750 MB) before the bound on the loaded
    document could run; five levels finished and passed the check as a nine-key mapping."""
    with pytest.raises(ConfigError, match="alias bomb"):
        load_yaml(merge_bomb(), "f.yaml")
    path = tmp_path / "accuracy_merge.yaml"
    path.write_text(merge_bomb(levels=9) + "models:\n  - model: m.onnx\n    per_op: *m9\n")
    with pytest.raises(ConfigError) as err:
        load_suite(path)
    assert err.value.where == str(path) and "alias bomb" in err.value.problem


def test_merge_key_bomb_in_a_stored_baseline(tmp_path):
    path = write_baseline(tmp_path / "mlp" / "default.yaml", _baseline())
    bombed = "info:\n" + "".join("  " + line + "\n" for line in merge_bomb(levels=9).splitlines())
    path.write_text(path.read_text().replace("environment:", bombed + "environment:", 1))
    with pytest.raises(ConfigError) as err:
        read_baseline(path)
    assert err.value.where == str(path) and "alias bomb" in err.value.problem


@pytest.mark.parametrize("nesting", ["a: " + "[" * 100_000 + "]" * 100_000 + "\n",
                                     "a:\n  " + "- " * 100_000 + "x\n"], ids=["flow", "compact"])
def test_deep_nesting_never_reaches_libyaml_composer(tmp_path, nesting):
    """Baselines are read with libyaml's CSafeLoader, whose composer recurses in C: 100,000
    levels (400 KB) crashed the process with SIGSEGV instead of raising. Run in a child so the
    old code's crash fails this test instead of ending the whole run."""
    import subprocess
    import sys

    path = write_baseline(tmp_path / "mlp" / "default.yaml", _baseline())
    path.write_text(path.read_text().replace("environment:", nesting + "environment:", 1))
    code = ("import sys\n"
            "from pytest_ascend_accuracy.baseline.file import read_baseline\n"
            "from pytest_ascend_accuracy.errors import ConfigError\n"
            "try:\n    read_baseline(sys.argv[1])\n"
            "except ConfigError as exc:\n    print(exc.where, '|', exc.problem)\n")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-500:])
    assert done.stdout.startswith(f"{path} | ") and "nested" in done.stdout
