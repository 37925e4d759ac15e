"""core.background_removal: a tree is gone from its place when ``remove`` returns, its files
go in a thread, ``wait`` returns once they are gone; what cannot be renamed goes at once."""
import os
import shutil
import threading

from pytest_ascend_accuracy.core import background_removal
from pytest_ascend_accuracy.core.background_removal import REMOVING_PREFIX, BackgroundRemoval


def _tree(root):
    (root / "a" / "b").mkdir(parents=True)
    for k in range(5):
        (root / "a" / "b" / f"f{k}").write_bytes(b"x" * 4096)
    return root


def test_the_tree_is_gone_at_once_and_its_files_by_wait(tmp_path, monkeypatch):
    tree = _tree(tmp_path / "dump")
    gate, calls = threading.Event(), []
    real_rmtree = shutil.rmtree

    def slow_rmtree(path, *a, **k):  # the thread's removal waits for the gate
        calls.append(threading.current_thread().name)
        gate.wait(10)
        real_rmtree(path, *a, **k)

    monkeypatch.setattr(background_removal.shutil, "rmtree", slow_rmtree)
    removal = BackgroundRemoval()
    removal.remove(tree)
    assert not tree.exists()  # gone from its place before its files are
    aside = [p for p in tmp_path.iterdir() if p.name.startswith(REMOVING_PREFIX + "dump-")]
    assert len(aside) == 1 and (aside[0] / "a" / "b" / "f4").is_file()
    waiter = threading.Thread(target=removal.wait)
    waiter.start()
    waiter.join(0.2)
    assert waiter.is_alive()  # wait() waits for the files
    gate.set()
    waiter.join(10)
    assert not waiter.is_alive() and list(tmp_path.iterdir()) == []
    assert calls == ["ascend-accuracy-remove"]  # not on the caller's thread


def test_what_cannot_be_renamed_is_removed_at_once(tmp_path, monkeypatch):
    tree = _tree(tmp_path / "dump")

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied", str(src))

    monkeypatch.setattr(background_removal.os, "rename", refuse)
    BackgroundRemoval().remove(tree)
    assert list(tmp_path.iterdir()) == []


def test_a_symlink_or_a_missing_path_is_left_as_removing_left_it(tmp_path):
    target = _tree(tmp_path / "target")
    link = tmp_path / "link"
    os.symlink(target, link)
    removal = BackgroundRemoval()
    removal.remove(link)  # shutil.rmtree refuses a symlink: it and its target stay
    removal.remove(tmp_path / "missing")
    removal.wait()
    assert link.is_symlink() and (target / "a" / "b" / "f0").is_file()


def test_many_trees_and_wait_twice(tmp_path):
    removal = BackgroundRemoval()
    for k in range(6):
        removal.remove(_tree(tmp_path / f"d{k}"))
    removal.wait()
    removal.wait()
    assert list(tmp_path.iterdir()) == []
