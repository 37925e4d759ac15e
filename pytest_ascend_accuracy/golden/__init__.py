"""Golden dumps: the reference run (onnxruntime fp32) and goldens stored in a user's repository.

``onnxruntime_golden`` builds golden dumps (cached); ``stored`` reads, writes and replaces
golden directories kept next to the tests and holds the regeneration policy (``stored_recovery``
repairs what a killed writer left, ``stored_record`` is its ``golden.json``,
``stored_record_check`` refuses one not as written, ``stored_format`` tells one of an older
golden format that this model's golden no longer matches). May import
``core``, ``dump``, ``graph``, ``compare``, ``report`` and ``errors``.
"""
