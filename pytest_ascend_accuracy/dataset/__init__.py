"""Dataset-level accuracy: Top-k and tolerance checks of dataset figures against a reference.

May import every layer up to ``triage``; never ``plugin`` or ``cli``.
"""
