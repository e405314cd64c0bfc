"""Where the bundled resources (sample crash, icons, styles) live.

One resolver for every layout we ship: a source checkout or editable install
(`<repo>/resources`), a wheel (`inspector/resources`, force-included at build
time) and a PyInstaller bundle (`sys._MEIPASS/resources`).
"""

from __future__ import annotations

import sys
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def resources_dir() -> Path:
    """The folder that holds `examples/`, `icons/` and `styles/`."""
    candidates = []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        candidates.append(Path(bundle) / "resources")
    candidates += [_PACKAGE_DIR / "resources", _PACKAGE_DIR.parent / "resources"]
    for candidate in candidates:
        if (candidate / "examples").is_dir():
            return candidate
    return candidates[-1]


def sample_dump() -> Path:
    """The bundled sample crash opened when the app starts with no file."""
    return resources_dir() / "examples" / "sample.dmp"


def sample_symbols() -> Path:
    """The symbol store (`<debug_file>/<debug_id>/<name>.sym`) of the sample crash."""
    return resources_dir() / "examples" / "symbols"
