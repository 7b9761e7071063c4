"""Writing a file so that a crash mid-write never loses what it held: beside it first, then swapped in.

The stores toolsift keeps in the user folder (trusted projects, pinned tools,
skill grants, sign-in tokens) all hold consents or secrets that must not be
half-written; they share this one way of writing.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_atomically"]


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a private (0600) file beside it, swapped in whole.

    Raises:
        OSError: When the folder or the file cannot be written; ``path`` is then as it was.
    """
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
