"""Where the bundled resources (sample crash, icons, styles, desktop files) live.

One resolver for every layout we ship: a source checkout or editable install
(`<repo>/resources`, `<repo>/packaging/linux`), a wheel (`inspector/resources`,
`inspector/packaging/linux`, force-included at build time) and a PyInstaller
bundle (the same two folders under `sys._MEIPASS`).
"""

from __future__ import annotations

import sys
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent

#: The reverse-DNS application id: the desktop file, icon, AppStream component and Wayland app id
#: are named after it, and macOS uses it as the bundle identifier. Letters, digits and dots only:
#: macOS bundle identifiers and UTIs do not allow `_`, D-Bus names do not allow `-` everywhere.
APP_ID = "io.github.crashinspector.CrashInspector"
#: The shared-mime-info type of minidumps (see packaging/linux/*-mime.xml for why this name).
MINIDUMP_MIME_TYPE = "application/x-minidump"
#: Breakpad microdumps (Android logcat text), recognised by their BEGIN line.
MICRODUMP_MIME_TYPE = "text/x-breakpad-microdump"


def _find(relative: str, marker: str) -> Path:
    """`relative` under the bundle, the installed package or the checkout: the first that has `marker`."""
    candidates = []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        candidates.append(Path(bundle) / relative)
    candidates += [_PACKAGE_DIR / relative, _PACKAGE_DIR.parent / relative]
    for candidate in candidates:
        if (candidate / marker).exists():
            return candidate
    return candidates[-1]


def resources_dir() -> Path:
    """The folder that holds `examples/`, `icons/` and `styles/`."""
    return _find("resources", "examples")


def desktop_files_dir() -> Path:
    """The folder with the `.desktop` file, the MIME type XML and the AppStream metainfo."""
    return _find("packaging/linux", f"{APP_ID}.desktop")


def app_icon() -> Path:
    """The application icon (SVG): window icon, desktop icon, source of the PNG and ICO renderings."""
    return resources_dir() / "icons" / f"{APP_ID}.svg"


def sample_dump() -> Path:
    """The bundled sample crash opened when the app starts with no file."""
    return resources_dir() / "examples" / "sample.dmp"


def sample_symbols() -> Path:
    """The symbol store (`<debug_file>/<debug_id>/<name>.sym`) of the sample crash."""
    return resources_dir() / "examples" / "symbols"


def sample_binaries() -> Path:
    """The sample program's own executable (the very build that crashed): the dump holds no code
    bytes, so this is where the crashing instruction is read from on first use."""
    return resources_dir() / "examples" / "binaries"
