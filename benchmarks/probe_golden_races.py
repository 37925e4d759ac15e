"""Probes of issue 13 D4 and D5 at full size (the suite runs smaller versions of both in
tests/reliability/test_golden_races.py).

* ``regen``: a project of 16 tests sharing one stored golden, run ``pytest -n 8
  --accuracy-regen-all`` RUNS times (default 10); every run must pass, and the golden must be
  whole with nothing left next to it. Before the per-path lock about 1 run in 10 failed with
  FileNotFoundError / ENOTEMPTY.
* ``kill``: a process replacing a 12 MB golden is SIGKILLed at a random moment KILLS times
  (default 20); after each kill the next ``GoldenPolicy.obtain`` must return the old golden or
  the new one, whole (every tensor from the same version), with every leftover removed.

    python benchmarks/probe_golden_races.py [regen|kill|both] [--runs 10] [--kills 20]
"""
import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

TESTS = '''
import pytest
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

@accuracy(threshold=0.99)
@pytest.mark.parametrize("k", range(16))
def test_shared_golden(k, ascend_model, golden_dump, check_accuracy):
    inputs = make_inputs("models/passing_mlp.onnx")
    golden = golden_dump("models/passing_mlp.onnx", inputs, path="golden/mlp")
    check_accuracy(ascend_model("models/passing_mlp.onnx").run(inputs), golden)
'''


def probe_regen(runs: int) -> int:
    import onnx

    from pytest_ascend_accuracy.testing import models

    project = Path(tempfile.mkdtemp(prefix="probe-regen-"))
    (project / "models").mkdir()
    onnx.save(models.passing_mlp(), str(project / "models" / "passing_mlp.onnx"))
    (project / "test_shared.py").write_text(TESTS)
    (project / "pytest.ini").write_text("[pytest]\n")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "8",
           "--accuracy-regen-all", "test_shared.py"]
    subprocess.run(cmd[:-4] + ["-n", "0", "--accuracy-regen-all", "test_shared.py"], cwd=project,
                   capture_output=True, text=True)  # warm the cache; golden written
    failed = 0
    for run in range(runs):
        t = time.monotonic()
        r = subprocess.run(cmd, cwd=project, capture_output=True, text=True)
        last = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr[-300:]
        leftovers = sorted(p.name for p in (project / "golden").iterdir() if p.name != "mlp")
        ok = r.returncode == 0 and not leftovers and any((project / "golden" / "mlp").glob("*.npy"))
        failed += not ok
        print(f"regen run {run + 1:2d}/{runs}: {'ok  ' if ok else 'FAIL'} "
              f"{time.monotonic() - t:5.1f}s  {last}" + (f" leftovers={leftovers}" if leftovers else ""))
        if not ok:
            print(textwrap.indent(r.stdout[-3000:], "    "))
    print(f"regen: {runs - failed}/{runs} runs passed")
    return failed


WRITER = """
import sys
from pathlib import Path
import numpy as np
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.golden.stored import store_golden
path, flag, value = sys.argv[1], sys.argv[2], float(sys.argv[3])
dump = DumpSet.from_arrays({f"op{i:02d}": [np.full(1 << 16, value, np.float32)] for i in range(48)})
import time
Path(flag).write_text("writing")
t = time.monotonic()
store_golden(path, dump)
Path(flag).write_text(f"done {time.monotonic() - t}")
"""


def probe_kill(kills: int, seed: int = 0) -> int:
    import numpy as np

    from pytest_ascend_accuracy.dump.model import DumpSet
    from pytest_ascend_accuracy.golden import stored

    rng = random.Random(seed)
    root = Path(tempfile.mkdtemp(prefix="probe-kill-"))
    path = root / "golden" / "mlp"
    stored.store_golden(path, DumpSet.from_arrays(
        {f"op{i:02d}": [np.full(1 << 16, 0.0, np.float32)] for i in range(48)}))
    failed, seen = 0, {}
    t0 = time.monotonic()  # one write left to finish: the window the kills are spread over
    flag = root / "flag-full"
    subprocess.run([sys.executable, "-c", WRITER, str(path), str(flag), "0.0"], check=True)
    write_s = float((root / "flag-full").read_text().split()[1])
    print(f"an uncontested replace takes {write_s * 1000:.0f} ms (of {time.monotonic() - t0:.2f}s "
          "with the interpreter start); kills are spread over 1.1x that")
    for k in range(kills):
        flag = root / f"flag{k}"
        value = float(k + 1)
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(flag), str(value)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        while not flag.exists() and proc.poll() is None:
            time.sleep(0.001)
        time.sleep(rng.uniform(0, write_s * 1.1))
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
        before = {p.name for p in path.parent.iterdir()}
        notes = []
        policy = stored.GoldenPolicy(on_recovery=lambda p, note: notes.append(note))
        dump, status = policy.obtain(path, lambda: None)
        values = {float(op.outputs[0].load()[0]) for op in dump}
        whole = len(dump.ops) == 48 and len(values) == 1
        leftovers = [p.name for p in path.parent.iterdir() if p.name != "mlp"]
        version = values.pop() if whole else None
        outcome = "new" if version == value else "old" if version is not None else "MIXED"
        ok = whole and not leftovers and status == stored.USED
        failed += not ok
        seen[outcome] = seen.get(outcome, 0) + 1
        print(f"kill {k + 1:2d}/{kills}: {'ok  ' if ok else 'FAIL'} golden={outcome:5s} "
              f"left by the kill: {sorted(before - {'mlp'}) or '-'}; "
              f"reported: {notes[0] if notes else '-'}")
    print(f"kill: {kills - failed}/{kills} recovered whole with no leftovers "
          f"(old golden kept {seen.get('old', 0)}x, new golden won {seen.get('new', 0)}x)")
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="?", default="both", choices=["regen", "kill", "both"])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--kills", type=int, default=20)
    args = parser.parse_args()
    failed = 0
    if args.what in ("kill", "both"):
        failed += probe_kill(args.kills)
    if args.what in ("regen", "both"):
        failed += probe_regen(args.runs)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
