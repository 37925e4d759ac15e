"""The precision-debugging flow: ``diagnose(model, ...) -> Diagnosis`` and its reports.

``flow`` walks the steps (numbered as the developers' guide numbers them, ``result.GUIDE_STEPS``:
1 dump, 2 precision and the keep_dtype search, 3 buffer off, 4 fusion off, 5 inputs and
configuration, 6 the golden network), ``search`` the minimal-set searches, ``inputs`` the
data/configuration step, ``result`` the values it returns, ``report`` their text/JSON/HTML and
fix files. May import every layer below it (``core`` up to
``backends`` and ``baseline``), never ``plugin`` or ``cli``.
"""
