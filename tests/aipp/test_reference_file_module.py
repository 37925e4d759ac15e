"""A reference given as a file (``--reference path/prep.py:preprocess``, ``load_reference``)
is loaded under a module name of its own: as its bare stem it stayed in ``sys.modules``, and a
later test in the same process whose own ``prep.py`` it imported got the first file's module
(the suite failed so when the CLI test ran before a pytester test: "cannot reshape")."""
import sys

from pytest_ascend_accuracy.aipp.user_files import load_reference


def test_a_reference_file_leaves_its_stem_free_for_another_folders_module(tmp_path,
                                                                          monkeypatch):
    first, second = tmp_path / "a", tmp_path / "b"
    for folder, value in ((first, 1), (second, 2)):
        folder.mkdir()
        (folder / "prep_ref_stem.py").write_text(f"def preprocess(image):\n    return {value}\n")
    monkeypatch.delitem(sys.modules, "prep_ref_stem", raising=False)
    fn = load_reference(f"{first / 'prep_ref_stem.py'}:preprocess")
    assert fn(None) == 1 and "prep_ref_stem" not in sys.modules
    monkeypatch.syspath_prepend(str(second))
    import prep_ref_stem

    assert prep_ref_stem.preprocess(None) == 2
    monkeypatch.delitem(sys.modules, "prep_ref_stem", raising=False)


def test_a_reference_file_defining_a_dataclass_loads(tmp_path):
    (tmp_path / "prep_dc.py").write_text(
        "from dataclasses import dataclass\n\n\n@dataclass\nclass Norm:\n"
        "    scale: float = 2.0\n\n\ndef preprocess(image):\n    return Norm().scale * image\n")
    assert load_reference(f"{tmp_path / 'prep_dc.py'}:preprocess")(3.0) == 6.0
