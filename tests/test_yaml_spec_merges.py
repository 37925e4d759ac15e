"""``core.safe_yaml.load_yaml`` merges (``<<``) as the YAML merge spec has it, whatever PyYAML
is installed: PyYAML 6.0.4 drops a repeated merged key by the identity of its string, and a
suite's threshold depended on the version (the clean-clone CI, reviews). Random anchored
mappings merging earlier ones, against a reference written from the spec: a mapping's own keys
over merged ones, of a ``<<`` list the first over later ones, nested merges resolved first."""
import random

import pytest

from pytest_ascend_accuracy.core.safe_yaml import load_yaml

KEYS = ["t", "x", "threshold", "y", "model", "1", "a"]  # one-character keys: 6.0.4's trap


def _resolved(entry, resolved):
    """An anchored mapping ``entry`` ((merged anchors, own pairs)) as the spec reads it."""
    merged, own = entry
    out = {}
    for name in reversed(merged):  # the first listed wins: applied last
        out.update(resolved[name])
    out.update(own)
    return out


@pytest.mark.parametrize("seed", range(40))
def test_merges_are_read_as_the_spec_has_them(seed):
    rng = random.Random(seed)
    for _ in range(25):
        lines, resolved = [], {}
        for i in range(rng.randint(1, 4)):
            merged = rng.sample(sorted(resolved), rng.randint(0, len(resolved))) if resolved else []
            own = {k: rng.randint(0, 9) for k in rng.sample(KEYS, rng.randint(0, 3))}
            pairs = [f"{k}: {v}" for k, v in own.items()]
            if merged:
                pairs.append("<<: [" + ", ".join(f"*a{n}" for n in merged) + "]")
            rng.shuffle(pairs)  # own keys win wherever they stand
            lines.append(f"a{i}: &a{i} {{{', '.join(pairs)}}}")
            resolved[i] = _resolved((merged, own), resolved)
        doc = "\n".join(lines) + "\n"
        loaded = load_yaml(doc, "x.yaml", unique_keys=True)
        assert {int(k[1:]): v for k, v in loaded.items()} == {
            i: {int(k) if k == "1" else k: v for k, v in m.items()} for i, m in resolved.items()}


@pytest.mark.parametrize("doc", ["a: &a {x: 1}\nb: {<<: [*a, 1]}\n", "b: {<<: 1}\n",
                                 "a: &a {x: 1}\nb: {<<: [*a, [*a]]}\n"])
def test_a_merge_of_no_mapping_is_refused_in_pyyamls_own_words(doc):
    """(a review: a list entry that is no mapping read 'a mapping or list of mappings')"""
    import yaml

    with pytest.raises(yaml.YAMLError) as mine:
        load_yaml(doc, "x.yaml")
    with pytest.raises(yaml.YAMLError) as theirs:
        yaml.safe_load(doc)
    assert mine.value.problem == theirs.value.problem
