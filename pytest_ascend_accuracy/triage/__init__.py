"""The precision-debugging flow: ``diagnose(model, ...) -> Diagnosis`` and its reports.

``flow`` walks the steps (precision, keep_dtype search, buffer, fusion, inputs), ``search`` the
minimal-set searches, ``inputs`` the data/configuration step, ``result`` the values it returns,
``report`` their text/JSON/HTML and fix files. May import every layer below it (``core`` up to
``backends`` and ``baseline``), never ``plugin`` or ``cli``.
"""
