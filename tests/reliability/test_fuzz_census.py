"""The fuzz census in CI (fixed seed, a small count): every hostile input either loads or
fails with DumpFormatError naming the file; no other exception escapes. The full census that
docs/reliability.md quotes is ``python tests/reliability/fuzz_census.py 2000``."""
import pytest

from .fuzz_census import census, render

pytestmark = pytest.mark.reliability


def test_census_has_no_exception_outside_dump_format_error():
    result = census(n=60, seed=1313)
    table = render(result)
    for label, counts in result.items():
        assert sum(counts.values()) == 60, label
        assert not [k for k in counts if k.startswith("other exception")], table
    every = [c for label, c in result.items() if label.startswith("golden dirs")][0]
    assert every == {"every op read back under its own name with its own tensors": 60}
    seen = set().union(*result.values())
    for expected in ("DumpFormatError: bounded count exceeded (tensors, dims)",
                     "DumpFormatError: malformed nano TLV header",
                     "DumpFormatError: mapping/op-names CSV not parseable",
                     "parsed, every tensor loaded"):
        assert expected in seen, table
