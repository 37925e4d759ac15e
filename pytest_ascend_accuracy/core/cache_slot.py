"""An entry's place in the cache emptied before its build (``core.cache``), whatever was
left there: a folder, a file or a link."""
from __future__ import annotations

import os
import shutil
from pathlib import Path


def clear_slot(path: Path) -> bool:
    """Empty an entry's place before its build; whether anything was there. A link (to a
    folder, dangling, or a loop) or a file where the entry's folder goes is removed too: a
    trial left one there by a partial restore, and every build of the key then failed with
    "Not a directory" (``rmtree`` ignored it, the rename into place could not replace it)."""
    if path.is_symlink() or (os.path.lexists(path) and not path.is_dir()):
        path.unlink()
        return True
    if path.exists():
        shutil.rmtree(path, ignore_errors=True)
        return True
    return False
