"""core.dir_placement: FS_TOPDIR_FL on directories whose subdirectories should land apart (a run's
dump directories, see the module docstring), and nothing at all where there is no such flag."""
import errno
import os
import struct

import pytest

from pytest_ascend_accuracy.core import dir_placement
from pytest_ascend_accuracy.core.dir_placement import (FS_TOPDIR_FL, spread_subdirectories,
                                                       spreads_subdirectories)


def _flags(folder) -> int:
    import fcntl

    fd = os.open(folder, os.O_RDONLY)
    try:
        got = fcntl.ioctl(fd, dir_placement.FS_IOC_GETFLAGS, struct.pack("i", 0))
        return struct.unpack("i", got)[0]
    finally:
        os.close(fd)


@pytest.fixture
def flagged_fs(tmp_path):
    """tmp_path where the file system keeps inode flags (ext2/3/4 and others); skips elsewhere."""
    probe = tmp_path / "probe"
    probe.mkdir()
    if not spread_subdirectories(probe):
        pytest.skip(f"{tmp_path}: this file system has no FS_TOPDIR_FL")
    return tmp_path


def test_the_flag_is_set_and_every_other_flag_kept(flagged_fs):
    folder = flagged_fs / "runs"
    folder.mkdir()
    before = _flags(folder)
    assert not before & FS_TOPDIR_FL and not spreads_subdirectories(folder)
    assert spread_subdirectories(folder) is True
    assert _flags(folder) == before | FS_TOPDIR_FL  # only the one flag added
    assert spreads_subdirectories(folder)
    assert spread_subdirectories(folder) is True  # set already: nothing more to do


@pytest.mark.parametrize("err", [errno.ENOTTY, errno.EOPNOTSUPP, errno.EPERM, errno.EINVAL])
def test_without_the_flag_nothing_changes_and_nothing_is_raised(tmp_path, monkeypatch, err):
    fcntl = pytest.importorskip("fcntl")

    def refuse(fd, request, arg=0, *rest):
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(fcntl, "ioctl", refuse)
    assert spread_subdirectories(tmp_path) is False
    assert spreads_subdirectories(tmp_path) is False


def test_a_missing_directory_or_a_file_is_no_error(tmp_path):
    (tmp_path / "file").write_text("x")
    assert spread_subdirectories(tmp_path / "missing") is False
    assert spread_subdirectories(tmp_path / "file") is False


def test_make_spread_dirs_flags_the_highest_directory_it_makes_up_to_top(flagged_fs):
    from pytest_ascend_accuracy.core.dir_placement import make_spread_dirs

    top = flagged_fs / "dump"
    make_spread_dirs(top / "a" / "b", top=top)
    assert [spreads_subdirectories(p) for p in (top, top / "a", top / "a" / "b")] == [
        True, False, False]
    make_spread_dirs(top / "c" / "d", top=top)  # top exists now: the highest made is c
    assert spreads_subdirectories(top / "c") and not spreads_subdirectories(top / "c" / "d")
    above = flagged_fs / "above"
    make_spread_dirs(above / "top" / "x", top=above / "top")  # never above top
    assert not spreads_subdirectories(above) and spreads_subdirectories(above / "top")
    existing = flagged_fs / "existing"
    existing.mkdir()
    make_spread_dirs(existing, top=existing)
    assert not spreads_subdirectories(existing)
