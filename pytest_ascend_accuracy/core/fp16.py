"""float16 facts every layer needs, defined once.

The largest finite float16 is 65504 (IEEE 754 binary16: (2 - 2**-10) * 2**15); values beyond it
overflow to +-inf on chips that follow IEEE, or saturate to +-65504 in the older saturation mode.
"""
FP16_MAX = 65504.0
