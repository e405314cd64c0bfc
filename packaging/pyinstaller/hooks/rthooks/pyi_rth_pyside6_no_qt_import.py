"""Run-time hook used instead of PyInstaller's PySide6 hook: Qt's plugin folder, without importing Qt.

PyInstaller's own hook imports PySide6.QtCore when the bundle starts (to register a
qt.conf for Qt builds that lack one), so Qt and ICU would load into every run,
the headless `stackwalk` and `dump` included. The PyPI wheels we bundle register
their qt.conf themselves when PySide6 is imported, so only the plugin folder is
set here, as PyInstaller's hook sets it.
"""

import os
import sys


def _set_plugin_path() -> None:
    qt = os.path.join(sys._MEIPASS, "PySide6")
    if sys.platform != "win32":
        qt = os.path.join(qt, "Qt")
    os.environ["QT_PLUGIN_PATH"] = os.path.join(qt, "plugins")


_set_plugin_path()
del _set_plugin_path
