"""The FAKE atc's persistent interpreter (``fake_atc_server``): through the shim on PATH a call
behaves exactly as a fresh ``python -m ...fake_atc`` process (output, exit status, files, log
redirection), a killed client takes its call with it, and an unusable socket falls back to the
fresh process."""
import json
import os
import signal
import subprocess
import time
import zipfile

import pytest


def atc(toolkit, cwd, *args, env=None):
    """Run the shim like run_atc does: stdout+stderr to a log file, stdin closed."""
    log = cwd / "atc.log"
    with open(log, "wb") as out:
        code = subprocess.call([str(toolkit.atc), *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                               stderr=subprocess.STDOUT, env=env)
    return code, log.read_text()


def convert_args(model, *extra):
    return [f"--model={model}", "--framework=5", "--output=tiny", "--soc_version=Ascend310P3", *extra]


def pids(calls):
    """Pids of the recorded calls (complete lines only: a call may be writing its line)."""
    try:
        with open(calls) as f:
            return [json.loads(line)["pid"] for line in f if line.endswith("\n")]
    except FileNotFoundError:
        return []


def test_server_and_fresh_process_give_the_same_result(fake_toolkit, fake_atc_on_path, tiny_model, tmp_path):
    results = {}
    for label, server in (("server", "1"), ("fresh", "0")):
        cwd = tmp_path / label
        cwd.mkdir()
        env = dict(os.environ, FAKE_ATC_SERVER=server)
        code, out = atc(fake_toolkit, cwd, *convert_args(tiny_model, "--precision_mode=allow_fp32_to_fp16"),
                        env=env)
        with zipfile.ZipFile(cwd / "tiny.om") as zf:
            meta = json.loads(zf.read("meta.json"))
        results[label] = (code, out, meta["precision_value"], sorted(p.name for p in cwd.iterdir()))
    assert results["server"] == results["fresh"]
    assert results["server"][0] == 0 and results["server"][2] == "allow_fp32_to_fp16"
    code, out = atc(fake_toolkit, tmp_path / "server", *convert_args(tiny_model, "--precision_mode=fp16"))
    assert code == 255 and "E10001: Value [fp16] for parameter [--precision_mode] is invalid." in out
    calls = pids(fake_atc_on_path)
    assert len(set(calls)) == 3 and os.getpid() not in calls  # one process per call either way


def test_a_killed_client_ends_its_call(fake_toolkit, fake_atc_on_path, tiny_model, tmp_path):
    env = dict(os.environ, FAKE_ATC_HANG="60")
    with open(tmp_path / "atc.log", "wb") as out:
        proc = subprocess.Popen([str(fake_toolkit.atc), *convert_args(tiny_model)], cwd=tmp_path,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (
            pids(fake_atc_on_path) and "please wait" in (tmp_path / "atc.log").read_text()):
        time.sleep(0.02)  # the call has started and printed its first line: it now hangs
    child = pids(fake_atc_on_path)[0]
    assert child != proc.pid  # the call runs in the server's child, not in the client
    os.killpg(proc.pid, signal.SIGTERM)  # what run_atc does on a timeout
    proc.wait(timeout=30)
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.02)
    else:
        pytest.fail(f"the fake atc call {child} outlived its killed client")
    assert (tmp_path / "atc.log").read_text().splitlines() == ["ATC start working now, please wait for a moment."]
    assert not (tmp_path / "tiny.om").exists()


def test_unusable_socket_falls_back_to_a_fresh_process(fake_toolkit, fake_atc_on_path, tiny_model, tmp_path):
    env = dict(os.environ, FAKE_ATC_SOCKET=str(tmp_path / "no-such-dir" / "atc.sock"))
    code, out = atc(fake_toolkit, tmp_path, *convert_args(tiny_model), env=env)
    assert code == 0 and out.splitlines()[-1] == "ATC run success, welcome to the next use."
    assert (tmp_path / "tiny.om").is_file()
