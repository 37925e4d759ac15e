"""plugin.progress against a stand-in terminal reporter: on a terminal one line updated in
place, the result letter put back on its file's line; nothing under -q or on xdist workers."""
from types import SimpleNamespace

from pytest_ascend_accuracy.compare.engine import CompareProgress
from pytest_ascend_accuracy.plugin.progress import TerminalProgress


class Reporter:
    def __init__(self, tty):
        self.calls, self.tty, self.currentfspath = [], tty, "test_a.py"
        self._tw = SimpleNamespace(flush=lambda: None)

    def isatty(self):
        return self.tty

    def ensure_newline(self):
        if self.currentfspath:
            self.calls.append(("newline",))
            self.currentfspath = None

    def write(self, text):
        self.calls.append(("write", text))

    def rewrite(self, text, erase=False):
        self.calls.append(("rewrite", text))

    def write_fspath_result(self, nodeid, res):
        self.calls.append(("prefix", nodeid))
        self.currentfspath = nodeid


def config(tr, verbose=0, worker=False):
    plugins = {"terminalreporter": tr, "capturemanager": None}
    cfg = SimpleNamespace(pluginmanager=SimpleNamespace(getplugin=plugins.get),
                          getoption=lambda name, default=None: verbose)
    if worker:
        cfg.workerinput = {}
    return cfg


def test_on_a_terminal_one_line_is_updated_and_the_prefix_comes_back():
    tr = Reporter(tty=True)
    progress = TerminalProgress.for_config(config(tr), forced=False)
    progress.delay = 0.0
    with progress.building("emulator", "k"):
        pass
    line = progress.compare()
    line(CompareProgress(1, 2, "conv1", 10, 20))
    line(CompareProgress(2, 2, "relu1", 20, 20))
    kinds = [c[0] for c in tr.calls]
    assert kinds == ["newline", "write", "rewrite", "write", "write", "rewrite"]
    assert tr.calls[1] == ("write", "ascend-accuracy: converting (emulator) ...")
    assert tr.calls[2][1].startswith("ascend-accuracy: converting (emulator) done in ")
    assert tr.calls[3] == ("write", "\n")  # the compare starts below the finished build line
    assert "2/2 tensors" in tr.calls[5][1]
    progress.pytest_runtest_logreport(SimpleNamespace(nodeid="test_a.py::test_x"))
    assert tr.calls[-1] == ("prefix", "test_a.py::test_x")  # the result letter's line


def test_silent_under_q_on_workers_and_in_logs_unless_asked():
    assert TerminalProgress.for_config(config(Reporter(True), verbose=-1), forced=False) is None
    assert TerminalProgress.for_config(config(Reporter(True), worker=True), forced=True) is None
    tr = Reporter(tty=False)
    log = TerminalProgress.for_config(config(tr), forced=False)
    with log.building("golden", "k"):
        pass
    assert tr.calls == [] and not log.active
    forced = TerminalProgress.for_config(config(tr), forced=True)
    with forced.building("golden", "k"):
        pass
    assert [c[0] for c in tr.calls] == ["newline", "write", "write"]
    assert tr.calls[2][1].startswith("\nascend-accuracy: golden run (onnxruntime fp32) done in ")


class OldReporter(Reporter):
    """pytest before 8.4.1: ``TerminalReporter.isatty`` is a bool attribute, not a method."""

    def __init__(self, tty):
        super().__init__(tty)
        self.isatty = tty


def test_a_reporter_whose_isatty_is_a_bool_as_before_pytest_8_4_1():
    for tty in (True, False):
        progress = TerminalProgress.for_config(config(OldReporter(tty)), forced=False)
        assert progress.tty is tty and progress.active is tty


def test_the_dataset_progress_needs_nothing_newer_than_pytest_7():
    """``Config.get_verbosity`` is pytest 8's; the dataset progress asks ``getoption``."""
    from pytest_ascend_accuracy.plugin.dataset_check import progress_reporter

    def cfg(verbose):
        plugins = {"terminalreporter": Reporter(True), "capturemanager": None}
        return SimpleNamespace(pluginmanager=SimpleNamespace(get_plugin=plugins.get),
                               getoption=lambda name, default=None: verbose)  # no get_verbosity

    assert progress_reporter(cfg(0), "x") is not None
    assert progress_reporter(cfg(-1), "x") is None  # -q


def test_a_quick_build_draws_nothing_on_a_terminal_and_a_long_one_its_line():
    """Every build drew '... done in 0.0 s' on a terminal, breaking the result letters' line
    (review helper): a build is shown once it has run for the delay, as a compare is."""
    import re
    import time

    tr = Reporter(tty=True)
    progress = TerminalProgress.for_config(config(tr), forced=False)
    # (no wall-clock bet: a build quicker than an hour's delay, and a build that lasts until
    # its line is drawn; a loaded machine stalled the quick one past 0.2 s, or drew the long
    # one's line after its 0.5 s were over)
    progress.delay = 3600
    with progress.building("emulator", "k"):
        pass
    assert tr.calls == []
    progress.delay = 0.2
    with progress.building("golden", "k"):
        deadline = time.monotonic() + 60
        while len(tr.calls) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert [c[0] for c in tr.calls] == ["newline", "write", "rewrite"]
    assert tr.calls[1] == ("write", "ascend-accuracy: golden run (onnxruntime fp32) ...")
    done = re.fullmatch(r"ascend-accuracy: golden run \(onnxruntime fp32\) done in (\d+\.\d) s",
                        tr.calls[2][1])
    assert done and float(done.group(1)) >= 0.2, tr.calls[2]
