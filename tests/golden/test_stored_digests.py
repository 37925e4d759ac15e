"""The ``digests`` of a stored golden's record (``record_version`` 2): written for every tensor
file, checked on use (``stored_record.changed_files``, each file read once while its stat is
unchanged), and validated as part of the record (``stored_record_check``)."""
import json

import numpy as np
import pytest

from pytest_ascend_accuracy.golden import stored
from pytest_ascend_accuracy.golden import stored_record as rec
from pytest_ascend_accuracy.golden import stored_record_check as check
from tests.golden.test_stored_record_check import computer, written


def test_every_tensor_file_has_a_digest_of_its_bytes(tmp_path, model):
    golden, record = written(tmp_path, model)
    assert record["record_version"] == 2
    files = {p.name for p in golden.glob("*.npy")}
    assert set(record["digests"]) == set(record["tensors"]) == files
    assert all(d.startswith("xxh3_128:") for d in record["digests"].values())
    assert rec.changed_files(record, golden) == []


def test_a_changed_file_is_found_even_after_its_bytes_were_verified(tmp_path, model, monkeypatch):
    golden, record = written(tmp_path, model)
    import pytest_ascend_accuracy.core.cache as cache

    reads = []
    real = cache.file_digest
    monkeypatch.setattr(cache, "file_digest", lambda p, *a: reads.append(p) or real(p, *a))
    assert rec.changed_files(record, golden) == []
    assert rec.changed_files(record, golden) == [] and len(reads) == 4  # just written: racy
    monkeypatch.setattr(rec, "RACY_NS", -1)  # (as if written more than 2 s ago)
    reads.clear()
    assert rec.changed_files(record, golden) == []
    assert rec.changed_files(record, golden) == [] and len(reads) == 2  # read once each
    relu = next(golden.glob("relu1.*.npy"))
    np.save(relu, np.load(relu) * 2)  # the same size: the stat's times tell
    assert rec.changed_files(record, golden) == [relu.name]
    compute = computer(model)
    with pytest.raises(stored.StoredGoldenMismatch, match=f"tensor files changed .*: {relu.name}"):
        stored.GoldenPolicy().obtain(golden, compute, compute.identity)


@pytest.mark.parametrize("damage, said", [
    (lambda r: {k: v for k, v in r.items() if k != "digests"},
     "missing digests (every golden.json this package writes has it)"),
    (lambda r: dict(r, record_version=1), "unknown key \"digests\""),
    (lambda r: dict(r, digests={k: "md5:00" for k in r["digests"]}), "digests: expected a mapping"),
    (lambda r: dict(r, digests={k: v[:-1] for k, v in r["digests"].items()}),
     "digests: expected a mapping"),  # an xxh3_128 of 31 hex digits: edited, not a changed file
    (lambda r: dict(r, digests=dict(list(r["digests"].items())[:1])),
     "digests: expected one digest for each file of tensors, got "),
])
def test_a_record_with_wrong_digests_is_damaged(tmp_path, model, damage, said):
    golden, record = written(tmp_path, model)
    problems = check.record_problems(damage(record))
    assert any(said in p for p in problems), problems
    (golden / rec.RECORD_FILE).write_text(json.dumps(damage(record)))
    compute = computer(model)
    with pytest.raises(stored.StoredGoldenUnreadable, match="not as this package writes it"):
        stored.GoldenPolicy().obtain(golden, compute, compute.identity)
