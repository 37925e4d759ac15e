"""The plugin's printed advice lines that the pasted-advice tests read, as regular expressions:
``MODES``, a hint's modes lines (``  modes=[...]``, ``    YAML: modes: [...]``, ``  (from
pytest_ascend_accuracy import ...)``), and ``FIX``, a diagnosis' fix line (``  fix:
modes=[...]  (YAML: modes: [...]; from pytest_ascend_accuracy import ...)``); each with three
groups: the Python list, the YAML list and the names imported."""
import re

MODES = re.compile(r"^  modes=\[(.+)\]\n    YAML: modes: \[(.+)\]\n  \(from pytest_ascend_accuracy "
                   r"import (.+)\)$", re.M)
FIX = re.compile(r"^  fix: modes=\[(.+)\]  \(YAML: modes: \[(.+)\]; from pytest_ascend_accuracy "
                 r"import (.+)\)$", re.M)
