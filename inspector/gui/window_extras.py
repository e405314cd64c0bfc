"""Window-level guidance and reports: the Summary's links, report export, copy all threads, the
View › Dark Mode toggle, and status messages for pointers followed into modules.

Kept out of `main_window.py` (which composes the panes) so that each feature is one place:
`install(window)` adds the actions to the window's menus and connects the panes' requests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inspector.gui.main_window import MainWindow


def install(window: MainWindow) -> None:
    summary = window.summary_pane
    summary.problems_requested.connect(lambda: window.focus_pane("problems"))
    summary.add_symbols_requested.connect(window.choose_symbol_folder)
    window.module_pane.add_symbol_folder_requested.connect(window.choose_symbol_folder)
    window.module_pane.add_symbol_files_requested.connect(window.choose_symbol_files)
