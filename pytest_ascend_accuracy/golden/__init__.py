"""Golden dumps: the reference run (onnxruntime fp32) and goldens stored in a user's repository.

``onnxruntime_golden`` builds golden dumps (cached); ``stored`` reads, writes and replaces
golden directories kept next to the tests and holds the regeneration policy. May import
``core``, ``dump``, ``graph``, ``compare``, ``report`` and ``errors``.
"""
