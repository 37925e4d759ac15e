"""A link or a file where a cache entry's folder goes, and a link loop where a golden or a
baseline goes (a reliability trial): the entry was never rebuilt ("Not a directory" on every
run), ``cache --entries`` listed it nowhere and ``--clear`` left it; the loop gave a bare
``RuntimeError: Symlink loop`` where the plugin names the file and what to do."""
import os
import re

import pytest

from pytest_ascend_accuracy.cli import main
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.core.cache_size import broken_slots, prune
from pytest_ascend_accuracy.core.path_lock import path_lock
from pytest_ascend_accuracy.errors import ConfigError

KEY = "ab" + "0" * 62


def _build(tmp):
    (tmp / "data.bin").write_bytes(b"x" * 10)


def _linked(tmp_path):
    """(a cache, its place of KEY, the entry there links to): an entry of another cache."""
    real = Cache(tmp_path / "shared").get_or_build("golden", KEY, _build)
    cache = Cache(tmp_path / "c")
    slot = cache.entry_path("golden", KEY)
    slot.parent.mkdir(parents=True)
    os.symlink(real, slot)
    return cache, slot, real


def _break(slot, kind):
    slot.parent.mkdir(parents=True, exist_ok=True)
    if kind == "loop":
        os.symlink(slot.name, slot)
    elif kind == "dangling":
        os.symlink("/nonexistent/entry", slot)
    else:
        slot.write_bytes(b"")


@pytest.mark.parametrize("kind", ["loop", "dangling", "file"])
def test_a_link_or_file_in_an_entrys_place_is_rebuilt(tmp_path, kind):
    cache = Cache(tmp_path / "c")
    _break(cache.entry_path("golden", KEY), kind)
    entry = cache.get_or_build("golden", KEY, _build)
    assert entry.is_dir() and not entry.is_symlink() and (entry / "data.bin").is_file()
    assert cache.stats.rebuilt == 1


@pytest.mark.parametrize("kind", ["loop", "dangling", "file"])
def test_cache_lists_and_clear_removes_a_broken_slot(tmp_path, kind, capsys):
    cache = Cache(tmp_path / "c")
    cache.get_or_build("golden", "cd" + "1" * 62, _build)  # one real entry
    cache.release()  # (its session ends: no lease keeps it)
    slot = cache.entry_path("golden", KEY)
    _break(slot, kind)
    assert broken_slots(cache) == [slot]
    assert main(["cache", "--cache-dir", str(tmp_path / "c")]) == 0
    listed = capsys.readouterr().out
    assert f"and 1 link or file where an entry's folder goes (not entries; --clear removes them, " \
           f"a build of the key replaces each): golden/ab/{KEY}" in listed
    assert main(["cache", "--cache-dir", str(tmp_path / "c"), "--clear"]) == 0
    assert re.search(r"removed 1 entry \(\d+ B\) and 1 link or file where an entry's folder "
                     r"goes; 0 B left", capsys.readouterr().out)
    assert not os.path.lexists(slot)


def test_a_bound_below_the_total_does_not_touch_a_broken_slot_it_need_not(tmp_path):
    cache = Cache(tmp_path / "c")
    slot = cache.entry_path("golden", KEY)
    _break(slot, "file")
    assert prune(cache, 1 << 30).broken == 0 and os.path.lexists(slot)


@pytest.mark.parametrize("kind", ["golden", "baseline"])
def test_a_link_loop_where_a_file_goes_is_named_with_what_to_do(tmp_path, kind):
    loop = tmp_path / "default.yaml"
    os.symlink(loop.name, loop)
    with pytest.raises(ConfigError) as info:
        path_lock(loop, kind, lock_dir=tmp_path / "locks")
    assert str(info.value).startswith(
        f"{loop}: cannot resolve the {kind}'s path: it is a symbolic link loop (")
    assert str(info.value).endswith("remove the link (or point it at a real file) and run again")


def test_a_baseline_link_loop_fails_naming_it_without_promising_regen(pytester):
    import onnx

    from pytest_ascend_accuracy.testing import models as tiny_models

    onnx.save(tiny_models.passing_mlp(), str(pytester.path / "mlp.onnx"))
    pytester.makeini("[pytest]\nascend_accuracy_max_drop = 0.002\n")
    pytester.makepyfile(test_m="""
from pytest_ascend_accuracy import accuracy

@accuracy()
def test_mlp(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    inputs = accuracy_inputs("mlp.onnx", seed=0)
    check_accuracy(ascend_model("mlp.onnx").run(inputs), golden_dump("mlp.onnx", inputs))
""")
    pytester.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(failed=1)  # writes it
    [written] = list(pytester.path.glob("accuracy-baselines/**/*.yaml"))
    written.unlink()
    os.symlink(written.name, written)
    for extra in ([], ["--accuracy-regen"]):
        result = pytester.runpytest("-q", "-p", "no:cacheprovider", *extra)
        result.assert_outcomes(failed=1)
        line = [x for x in result.stdout.lines if "baseline unreadable" in x][0]
        assert "it is a symbolic link loop" in line and line.endswith(
            "remove the link (or point it at a real file) and run again"), line
        assert "RuntimeError" not in result.stdout.str()


def test_a_clear_never_removes_an_entry_built_after_its_listing(tmp_path, monkeypatch):
    # a review: the broken place was listed, a session built the entry there and held it, and
    # the clear removed the live folder under the key lock it took next
    from pytest_ascend_accuracy.core import cache_size

    builder = Cache(tmp_path / "c")
    slot = builder.entry_path("golden", KEY)
    _break(slot, "file")
    listed = broken_slots(builder)
    assert builder.get_or_build("golden", KEY, _build).is_dir()  # built, leased by builder
    monkeypatch.setattr(cache_size, "broken_slots", lambda cache: listed)
    done = prune(Cache(tmp_path / "c"), 0)
    assert done.broken == 0 and (slot / "data.bin").is_file()


def test_a_link_to_an_intact_entry_stays_a_hit(tmp_path):
    cache, slot, real = _linked(tmp_path)
    assert cache.get_or_build("golden", KEY, _build) == slot
    assert cache.stats.as_dict() == {"hits": 1, "misses": 0, "rebuilt": 0} and slot.is_symlink()


def test_a_clear_removes_a_linked_entrys_link_and_frees_nothing_of_the_other_cache(tmp_path):
    # a review: the link was moved aside to .evict-* and rmtree refused it without a word;
    # "removed 1 entry" claimed the other cache's bytes, and the link stayed for good
    cache, slot, real = _linked(tmp_path)
    assert broken_slots(cache) == []  # a link to a finished entry is an entry
    done = prune(cache, 0)
    assert [e.key for e in done.removed] == [KEY] and done.freed == 0
    assert os.listdir(slot.parent) == [] and (real / "data.bin").is_file()


def test_a_size_bound_keeps_a_linked_entry_whose_eviction_frees_nothing(tmp_path):
    # a review: --max-size evicted a link (0 bytes here) before real entries, losing a hit
    cache, slot, real = _linked(tmp_path)  # the least recently used
    cache.get_or_build("golden", "cd" + "1" * 62, _build)
    cache.get_or_build("golden", "ef" + "2" * 62, _build)
    cache.release()
    done = prune(cache, 150)
    assert KEY not in [e.key for e in done.removed] and slot.is_symlink()
    assert len(done.removed) == 1 and done.total_after <= 150
