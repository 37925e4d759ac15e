"""Fakes of the real Ascend tools (``atc``, pyACL, ais_bench, om files) and tiny test models.

The fakes behave like the real tools (they refuse what real ATC refuses) so the Ascend backend's
real code runs against them; they are named as fakes everywhere. May import ``backends`` and the
layers below it, never ``baseline``, ``triage``, ``dataset``, ``plugin`` or ``cli``.
"""
