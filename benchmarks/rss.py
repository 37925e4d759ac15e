"""Peak resident set size, shared by the benchmark scripts (run them as scripts: this folder
is then on ``sys.path``)."""
import sys


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
