"""Running ATC as a subprocess: timeout, progress lines, readable failures.

ATC conversions take minutes, print little and fail with error-manager codes (docs/formats.md §5,
``GE main.cc CheckRet``): the first line is ``ATC start working now, please wait for a moment.``,
success ends with ``ATC run success, welcome to the next use.``, failure prints
``ATC run failed, Please check the detail log, ...`` followed by lines such as
``E10001: Value [...] for parameter [--x] is invalid. ...``, ``E19010: No parser is registered
for Op [...]`` or ``EZ3003: No supported Ops kernel and engine are found for [...]`` and exits
non-zero. ``run_atc``:

* runs the argv (never a shell) with cwd = the build directory, stdin closed, stdout and stderr
  merged into ``atc.log`` in that directory (no pipe to fill up);
* points ``ASCEND_PROCESS_LOG_PATH`` at ``plog/`` in the same directory so the plog files of this
  conversion can be quoted (their line format is ``[LEVEL] MODULE(pid,atc.bin):time [file:line]text``);
* calls ``progress(line)`` when it starts and every ``progress_interval`` seconds while it runs;
* on timeout terminates the whole process group it started (SIGTERM, then SIGKILL);
* raises ``ConversionError`` carrying the ATC error code, the tail of the output and of the
  newest plog file, and the command line.
"""
from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Mapping, Optional, Sequence, Tuple

from ...errors import ConversionError

SUCCESS_LINE = "ATC run success"
FAILED_LINE = "ATC run failed"
LOG_NAME = "atc.log"
PLOG_DIR = "plog"
TAIL_LINES = 20
_CODE_RE = re.compile(r"^\s*(E[0-9A-Z]{5}):\s?(.*)$")
_OPTION_RE = re.compile(r"\[--([a-z0-9_]+)\]|--([a-z0-9_]+)\b")

Progress = Callable[[str], None]


@dataclass(frozen=True)
class AtcRun:
    """A finished, successful ATC run."""

    argv: Tuple[str, ...]
    returncode: int
    output: str
    seconds: float
    log_file: Path


def run_atc(argv: Sequence[str], *, cwd: "str | os.PathLike[str]", timeout: float = 3600.0,
            what: str = "model", progress: Optional[Progress] = None, progress_interval: float = 30.0,
            env: Optional[Mapping[str, str]] = None, toolkit_version: Optional[str] = None,
            log_name: str = LOG_NAME) -> AtcRun:
    """Run ATC and return its output, or raise ConversionError (see the module docstring).
    The merged output goes to ``cwd/log_name``."""
    argv = tuple(os.fspath(a) for a in argv)
    cwd = Path(cwd)
    log_path = cwd / log_name
    run_env = dict(os.environ if env is None else env)
    run_env["ASCEND_PROCESS_LOG_PATH"] = str(cwd / PLOG_DIR)
    command = _shell_line(argv)
    start = time.monotonic()
    try:
        with open(log_path, "wb") as log:
            try:
                proc = subprocess.Popen(argv, cwd=str(cwd), stdin=subprocess.DEVNULL, stdout=log,
                                        stderr=subprocess.STDOUT, env=run_env, start_new_session=True)
            except OSError as exc:
                raise ConversionError(f"ATC could not be started ({exc.strerror or exc}): {command}",
                                      command=argv) from exc
            if progress:
                progress(f"ATC converting {what}: started ({argv[0]})")
            returncode = _wait(proc, timeout, start, what, progress, progress_interval, argv, log_path)
    except OSError as exc:
        if isinstance(exc, ConversionError):
            raise
        raise ConversionError(f"cannot write the ATC log {log_path} ({exc.strerror or exc})",
                              command=argv) from exc
    seconds = time.monotonic() - start
    output = _read(log_path)
    if returncode != 0 or SUCCESS_LINE not in output:
        raise _failure(argv, returncode, output, cwd, what, toolkit_version)
    if progress:
        progress(f"ATC converting {what}: done in {seconds:.0f}s")
    return AtcRun(argv=argv, returncode=returncode, output=output, seconds=seconds, log_file=log_path)


def parse_atc_errors(output: str) -> List[Tuple[str, str]]:
    """(code, message) for every error-manager line such as ``E10001: ...``, in order."""
    found = []
    for line in output.splitlines():
        m = _CODE_RE.match(line)
        if m:
            found.append((m.group(1), m.group(2).strip()))
    return found


def rejected_option(errors: Sequence[Tuple[str, str]], argv: Sequence[str]) -> Optional[str]:
    """The ``--name=value`` argument of ``argv`` that an error line names, if any."""
    passed = {}
    for arg in argv[1:]:
        if arg.startswith("--") and "=" in arg:
            passed[arg[2:].split("=", 1)[0]] = arg
    for _code, message in errors:
        for m in _OPTION_RE.finditer(message):
            name = m.group(1) or m.group(2)
            if name in passed:
                return passed[name]
    return None


def tail(text: str, lines: int = TAIL_LINES) -> str:
    kept = [line.rstrip() for line in text.splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def stderr_progress(line: str) -> None:
    """Default progress sink: one line on the real stderr (visible under pytest capture)."""
    stream = sys.__stderr__ or sys.stderr
    try:
        stream.write(f"[ascend-accuracy] {line}\n")
        stream.flush()
    except (OSError, ValueError):
        pass


# -- internals ---------------------------------------------------------------------------------
def _wait(proc, timeout, start, what, progress, interval, argv, log_path) -> int:
    next_report = start + interval
    while True:
        now = time.monotonic()
        remaining = start + timeout - now
        if remaining <= 0:
            _terminate(proc)
            output = _read(log_path)
            raise ConversionError(
                f"ATC did not finish converting {what} within {timeout:g}s and was stopped.\n"
                f"command: {_shell_line(argv)}\n" + _tails(output, log_path.parent)
                + "\nRaise the timeout (AscendBackend(timeout=...)) if the model is large.",
                command=argv, log_tail=tail(output), code="TIMEOUT")
        try:
            return proc.wait(timeout=max(0.05, min(remaining, next_report - now)))
        except subprocess.TimeoutExpired:
            pass
        if progress and time.monotonic() >= next_report:
            progress(f"ATC converting {what}: {time.monotonic() - start:.0f}s elapsed")
            next_report += interval


def _terminate(proc) -> None:
    """Stop the process group we started: SIGTERM, a grace period, then SIGKILL."""
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def _failure(argv, returncode, output, cwd, what, toolkit_version) -> ConversionError:
    errors = parse_atc_errors(output)
    code = errors[0][0] if errors else None
    if returncode == 0:
        headline = f"ATC exited 0 converting {what} but did not print '{SUCCESS_LINE}'"
    else:
        headline = f"ATC failed converting {what} (exit status {returncode})"
    lines = [headline + (f", error {code}:" if code else ":")]
    lines += [f"  {c}: {m}" for c, m in errors[:5]] or ["  (no ATC error code in its output)"]
    bad = rejected_option(errors, argv)
    if bad and _path_refused(bad, errors):
        lines.append(_path_advice(bad, toolkit_version))
    elif bad:
        version = toolkit_version or "unknown version"
        text = (f"The installed ATC (toolkit {version}) rejected {bad}. If the conversion mode "
                f"asked for it, this toolkit may not know that option or value: choose another "
                f"mode")
        if bad.startswith("--precision_mode_v2"):  # a toolkit before 7.0 knows only the v1 flag
            text += (", or pass the precision mode as --precision_mode, as toolkits before 7.0 "
                     "take it: pytest --ascend-precision-policy=precision_mode (ini "
                     "ascend_precision_policy), AscendBackend(precision_policy='precision_mode')")
        lines.append(text + ".")
    lines.append(f"command: {_shell_line(argv)}")
    lines.append(_tails(output, cwd))
    return ConversionError("\n".join(lines), command=argv, log_tail=tail(output), code=code,
                           errors=errors)


def _path_refused(bad: str, errors) -> bool:
    """Whether ATC refused ``bad`` (``--option=value``) for its path's characters (GE's
    ``CheckInputPathValid``: "The path can only contain ..."), an option whose path it checks."""
    from ...core.atc_paths import CHECKED_OPTIONS

    option = bad[2:].partition("=")[0]
    return (option in ("model", "weight") + CHECKED_OPTIONS
            and any("path can only contain" in message.lower() for _, message in errors))


def _path_advice(bad: str, toolkit_version) -> str:
    """What to do where ATC refused a path's characters the backend let through (a non-ASCII one:
    older GE releases pass those, so they are ATC's to judge), instead of "choose another mode",
    which no mode can help with."""
    from ...core.atc_paths import ATC_PATH_RULE

    where = ("copy or move the model (with its external data files, if any) to a folder whose "
             "path holds none of them" if bad.startswith(("--model=", "--weight=")) else
             "give the cache a folder whose path holds none of them (pytest "
             "--accuracy-cache-dir=DIR or ini ascend_accuracy_cache_dir; ascend-accuracy "
             "diagnose --cache-dir DIR)")
    return (f"The installed ATC (toolkit {toolkit_version or 'unknown version'}) refused the "
            f"path of {bad}: {ATC_PATH_RULE}; {where}.")


def _tails(output: str, cwd: Path) -> str:
    parts = [f"ATC output (last {TAIL_LINES} lines):",
             _indent(tail(output) or "(empty)")]
    plog = _newest_plog(cwd / PLOG_DIR)
    if plog is not None:
        parts.append(f"plog file {plog.name} (last {TAIL_LINES} lines):")
        parts.append(_indent(tail(_read(plog)) or "(empty)"))
    return "\n".join(parts)


def _newest_plog(root: Path) -> Optional[Path]:
    try:
        logs = [p for p in root.rglob("*.log") if p.is_file()]
    except OSError:
        return None
    return max(logs, key=lambda p: (p.stat().st_mtime, p.name)) if logs else None


def _read(path: Path) -> str:
    try:
        return Path(path).read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def _shell_line(argv: Sequence[str]) -> str:
    return " ".join(shlex.quote(a) for a in argv)
