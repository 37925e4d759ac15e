"""What the benchmark scripts share: peak resident set size, and running one phase of a script
in a fresh process (run the scripts as scripts: this folder is then on ``sys.path``)."""
import json
import subprocess
import sys
import time


def peak_rss_bytes() -> int:
    """Peak resident set size of this process (VmHWM from /proc, else getrusage)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def reset_peak_rss() -> bool:
    """Restart this process's peak RSS (VmHWM) from its current RSS (Linux >= 4.0: ``5`` to
    /proc/self/clear_refs), so a later reading is the peak of what ran since. False where the
    system cannot; the peak then covers the whole process."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def run_phase(script: str, args: list) -> dict:
    """Run ``script args`` in a fresh interpreter (its own peak RSS, cold imports) and return
    the JSON object its last stdout line holds; a failed phase ends the benchmark with its
    stderr."""
    proc = subprocess.run([sys.executable, script] + [str(a) for a in args],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"benchmark phase {args[:2]} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def report_phase(phase) -> int:
    """In a phase's process: run ``phase()`` (a dict of figures), add its peak RSS and CPU
    seconds, and print it as the JSON line ``run_phase`` reads."""
    t0 = time.process_time()
    result = phase()
    result["peak_rss"] = peak_rss_bytes()
    result["cpu_s"] = time.process_time() - t0
    print(json.dumps(result))
    return 0
