"""A converted model whose cache entry was removed while the session used it read "unreadable
emulator plan ([Errno 2] No such file or directory ...)" (a CI trial: an entry evicted mid-test
by a prune that did not see the session's lease). It now says the entry was removed while in
use and that running again converts it anew."""
import shutil
from pathlib import Path

import pytest

from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.errors import DumpFormatError
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
from pytest_ascend_accuracy.testing import models


def test_a_removed_entry_says_so_and_a_damaged_plan_still_reads_unreadable(tmp_path):
    import onnx

    model = str(tmp_path / "passing_mlp.onnx")
    onnx.save(models.passing_mlp(), model)
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    om = backend.convert(model)
    entry = Path(om.path).parent
    (entry / "plan.json").write_text("{")  # damaged, the entry still there: as before
    with pytest.raises(DumpFormatError, match=r"plan\.json: unreadable emulator plan"):
        backend.run(om, make_inputs(model), dump_dir=tmp_path / "d1")
    shutil.rmtree(entry)
    with pytest.raises(DumpFormatError) as info:
        backend.run(om, make_inputs(model), dump_dir=tmp_path / "d2")
    assert str(info.value).endswith(
        f"{entry}: this converted model's cache entry was removed while the session used it (by "
        "hand, or by a prune that does not see this session's lease: another machine without "
        "shared file locks, or an older release of this plugin); run the test again to convert "
        "it anew"), str(info.value)
    fresh = backend.convert(model)  # running again converts it anew
    assert backend.run(fresh, make_inputs(model), dump_dir=tmp_path / "d3")
