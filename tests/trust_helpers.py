"""A server whose start leaves a mark, for the tests of what a project's config may launch."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from servers import EXAMPLES

# Any program at all: this one leaves a file behind, then serves the example tools so that a start is visible.
MARKER_SERVER = """\
import pathlib, runpy, sys
marker, server = sys.argv[1:]
pathlib.Path(marker).write_text("ran")
sys.argv[1:] = []
sys.path.insert(0, str(pathlib.Path(server).parent))
runpy.run_path(server, run_name="__main__")
"""


def marker_server(folder: Path, name: str = "started") -> tuple[dict[str, Any], Path]:
    """A server entry whose program writes ``folder/name`` when it starts, and that marker file."""
    script, marker = folder / "marker_server.py", folder / name
    script.write_text(MARKER_SERVER, encoding="utf-8")
    return {"command": sys.executable, "args": [str(script), str(marker), str(EXAMPLES / "general.py")]}, marker
