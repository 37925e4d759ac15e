"""The optional C extensions (``setup.py``) are built wherever a C compiler is there: they are
optional so that an install without one succeeds, which would also let a broken build pass
unseen, each extension's work then done by numpy several times slower."""
import shutil
import sysconfig

import pytest

from pytest_ascend_accuracy.compare import pair_sums, tiny_values
from pytest_ascend_accuracy.dump import channel_blocks

HAS_COMPILER = bool(shutil.which(sysconfig.get_config_var("CC") or "cc") or shutil.which("cc")
                    or shutil.which("gcc"))


@pytest.mark.skipif(not HAS_COMPILER, reason="no C compiler here: the install leaves them out")
@pytest.mark.parametrize("load, name", [(pair_sums.pair_sums_extension, "compare._pair_sums"),
                                        (tiny_values.pass_extension, "compare._tiny_pass"),
                                        (channel_blocks.channel_blocks_extension,
                                         "dump._channel_blocks")])
def test_the_install_builds_the_extension_where_a_c_compiler_is_there(load, name):
    assert load() is not None, (
        f"pytest_ascend_accuracy.{name} is not importable although a C compiler is installed: "
        "reinstall (pip install -e .) and read the build output")
