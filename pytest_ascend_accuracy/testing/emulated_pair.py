"""A tiny model's emulated device dump beside its stored golden, the pair tests compare
(``ascend-accuracy compare`` with the om json, ``assert_accuracy``, the hints)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class EmulatedPair:
    """``model``: the ONNX file; ``dump``: the device dump's root; ``golden``: the stored
    golden's folder; ``om_json``: the conversion's om json; ``cache``: the cache used."""

    model: Path
    dump: str
    golden: str
    om_json: str
    cache: object

    def compare_argv(self) -> list:
        """``ascend-accuracy compare DUMP GOLDEN --om-json F`` as ``cli.main`` takes it."""
        return ["compare", self.dump, self.golden, "--om-json", self.om_json]


def emulated_pair(folder, proto, mode=None, *, name: str = "model", store_inputs: bool = False,
                  input_shape=None, faults=()) -> EmulatedPair:
    """Save ``proto`` as ``folder/name.onnx``, convert it on the emulator under ``mode`` (with
    ``faults``), run it on its deterministic inputs into ``folder/dump`` and store its golden in
    ``folder/golden`` (with op inputs when ``store_inputs``), cache in ``folder/cache``."""
    import onnx

    from ..backends.emulator.backend import EmulatorBackend
    from ..core.cache import Cache
    from ..golden.onnxruntime_golden import golden_dump
    from ..golden.stored import store_golden
    from ..graph.onnx_graph import make_inputs

    folder = Path(folder)
    model = folder / f"{name}.onnx"
    onnx.save(proto, str(model))
    cache = Cache(folder / "cache")
    backend = EmulatorBackend(cache, faults=list(faults))
    inputs = make_inputs(model, input_shape=input_shape)
    converted = backend.convert(model, mode, input_shape=input_shape)
    dump = backend.run(converted, inputs, dump_dir=folder / "dump")
    golden = store_golden(folder / "golden", golden_dump(model, inputs, cache=cache,
                                                         input_shape=input_shape),
                          store_inputs=store_inputs)
    return EmulatedPair(model, str(dump.root), str(golden), str(converted.om_json), cache)
