"""Window-level guidance and reports: the Summary's links, File › Export Report, Edit › Copy All
Threads, the Threads and Unwind context menus, View › Dark Mode, and the status message for a
register followed into a module.

Kept out of `main_window.py` (which composes the panes) so that each feature is in one place:
`install(window)` adds the actions to the window's menus and connects the panes' requests.
The reports are the core's renderers of the document's final `ProcessState`, so an exported
file is exactly what `stackwalk --json` / `--human` / `--html` print for the same dump.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QModelIndex, QPoint, Qt, QTimer, Slot
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu, QMenuBar

from inspector.core.process import ProcessState
from inspector.gui.background import BackgroundCalls
from inspector.gui.document import AnalysisStatus
from inspector.gui.models.frame_model import stack_text
from inspector.gui.models.register_model import RegisterTableModel
from inspector.gui.models.roles import AddressRole
from inspector.gui.panes.follow import module_sentence
from inspector.gui.panes.frame_pane import thread_header
from inspector.gui.panes.module_pane import ModulePane
from inspector.gui.panes.register_pane import RegisterPane
from inspector.gui.panes.summary_pane import SummaryPane
from inspector.gui.panes.thread_pane import ThreadPane
from inspector.gui.panes.unwind_pane import UnwindPane
from inspector.gui.session import Session
from inspector.gui.settings import Settings
from inspector.gui.theme import Theme, apply_color_scheme


class MainWindow(Protocol):
    """What the extras use of `inspector.gui.main_window.MainWindow` (which installs them: a Protocol,
    not an import, so that the two modules do not import each other)."""

    session: Session
    settings: Settings
    theme: Theme
    color_scheme: str
    summary_pane: SummaryPane
    module_pane: ModulePane
    thread_pane: ThreadPane
    unwind_pane: UnwindPane
    register_pane: RegisterPane
    quit_action: QAction
    crashing_thread_action: QAction

    def menuBar(self) -> QMenuBar: ...
    def _action(self, text: str, slot: object, shortcut: str | None = None, *, tip: str = "") -> QAction: ...
    def _show_status(self, text: str, timeout_ms: int = ...) -> None: ...
    def focus_pane(self, key: str) -> None: ...
    def choose_symbol_folder(self) -> None: ...
    def choose_symbol_files(self) -> None: ...
    def present_error(self, title: str, text: str) -> None: ...
    def set_theme(self, theme: Theme) -> None: ...


def _json(state: ProcessState) -> str:
    from inspector.core.report.json_report import render_json

    return render_json(state) + "\n"  # as `stackwalk --json` prints it


def _human(state: ProcessState) -> str:
    from inspector.core.report.human import render_human

    return render_human(state)


def _html(state: ProcessState) -> str:
    from inspector.core.report.html_report import render_html

    return render_html(state)


#: suffix → (file dialog filter, renderer); the first is the default
REPORT_FORMATS: dict[str, tuple[str, Callable[[ProcessState], str]]] = {
    ".html": ("HTML report (*.html *.htm)", _html),
    ".json": ("JSON, rust-minidump's schema (*.json)", _json),
    ".txt": ("Text report, rust-minidump's --human (*.txt)", _human),
}


def report_format(path: Path, chosen_filter: str = "") -> str:
    """The format for `path`: its suffix if it names one, else the dialog's chosen filter, else HTML."""
    suffix = ".html" if path.suffix.lower() == ".htm" else path.suffix.lower()
    if suffix in REPORT_FORMATS:
        return suffix
    for key, (name, _) in REPORT_FORMATS.items():
        if name == chosen_filter:
            return key
    return ".html"


class WindowExtras:
    """The actions and menus `install` adds to a window (kept as an attribute of the window)."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        session = window.session
        #: File › Export Report renders and writes off the GUI thread
        self.exports = BackgroundCalls()
        self.exporting: Path | None = None  # the report being written
        self.export_action = window._action(
            "&Export Report…",
            self.choose_export,
            "Ctrl+E",
            tip="Save a report of every thread: HTML, JSON (rust-minidump's) or text (--human)",
        )
        self.copy_all_action = window._action(
            "Copy &All Threads",
            self.copy_all_threads,
            "Ctrl+Shift+A",
            tip="Copy every thread's stack as the text report prints it",
        )
        self.dark_mode_action = window._action(
            "&Dark Mode", self.set_dark_mode, tip="Draw the window dark (or light when unchecked)"
        )
        self.dark_mode_action.setCheckable(True)
        self.dark_mode_action.setChecked(window.theme.dark)
        for action in (self.export_action, self.copy_all_action):
            action.setEnabled(False)
        self._add_to_menus()

        summary = window.summary_pane
        summary.problems_requested.connect(lambda: window.focus_pane("problems"))
        summary.add_symbols_requested.connect(window.choose_symbol_folder)
        window.module_pane.add_symbol_folder_requested.connect(window.choose_symbol_folder)
        window.module_pane.add_symbol_files_requested.connect(window.choose_symbol_files)
        # the register pane follows a double-clicked value itself; say where it went when that is
        # another pane (the memory pane says so on its own)
        window.register_pane.view.doubleClicked.connect(self._register_followed)
        for view, build in (
            (window.thread_pane.view, self.thread_menu),
            (window.unwind_pane.view, self.unwind_menu),
        ):
            view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            view.customContextMenuRequested.connect(
                lambda point, v=view, b=build: b(point).popup(v.viewport().mapToGlobal(point))
            )
        session.document_changed.connect(self._update_actions)
        session.busy_changed.connect(self._update_actions)

    def _add_to_menus(self) -> None:
        window = self.window
        bar = window.menuBar()
        menus = {a.text().replace("&", ""): a.menu() for a in bar.actions() if a.menu() is not None}
        file_menu, view_menu = menus["File"], menus["View"]
        assert isinstance(file_menu, QMenu) and isinstance(view_menu, QMenu)
        file_menu.insertAction(window.quit_action, self.export_action)
        file_menu.insertSeparator(window.quit_action)
        self.edit_menu = QMenu("&Edit", bar)
        self.edit_menu.addAction(self.copy_all_action)
        bar.insertMenu(bar.actions()[1], self.edit_menu)
        view_menu.addSeparator()
        view_menu.addAction(self.dark_mode_action)

    # ---- reports ----

    def final_state(self) -> ProcessState | None:
        """The document's state once the walk is over (a report of a walk under way would be partial)."""
        doc = self.window.session.document
        if doc is None or doc.status is AnalysisStatus.RUNNING:
            return None
        return doc.state

    @Slot()
    def _update_actions(self, *_: object) -> None:
        ready = self.final_state() is not None
        self.export_action.setEnabled(ready and self.exporting is None)
        self.copy_all_action.setEnabled(ready)

    def export_report(self, path: Path, fmt: str | None = None) -> bool:
        """Start writing the report to `path` in `fmt` (a key of REPORT_FORMATS; None: by the suffix).

        Rendering a report of a deep or many-threaded dump takes seconds: it runs on the exports'
        own thread (the state is frozen, so nothing changes under it), and the status bar says when
        the file is written. False when there is nothing to export yet."""
        state = self.final_state()
        window = self.window
        if state is None:
            window._show_status("The walk is still running: export the report when it is over")
            return False
        if self.exporting is not None:  # a second call would drop the first before it starts
            window._show_status(f"Still saving the report to {self.exporting}")
            return False
        _, render = REPORT_FORMATS[fmt or report_format(path)]

        def write() -> Path:
            path.write_text(render(state), encoding="utf-8")
            return path

        self.exporting = path
        self._update_actions()
        window._show_status(f"Saving the report to {path}…", 0)
        self.exports.submit(write, self._exported, path)
        return True

    def _exported(self, _result: object, error: Exception | None, path: Path) -> None:
        window = self.window
        self.exporting = None
        self._update_actions()
        if isinstance(error, OSError):
            window.present_error("Cannot save the report", f"{path}: {error.strerror or error}")
        elif error is not None:
            window.present_error("Cannot save the report", f"{path}: {error}")
        else:
            window._show_status(f"Report saved to {path}")

    @Slot()
    def choose_export(self) -> None:
        window = self.window
        doc = window.session.document
        if doc is None:
            return
        start = (window.settings.last_directory or doc.path.parent) / f"{doc.path.stem}-report.html"
        filters = ";;".join(name for name, _ in REPORT_FORMATS.values())
        parent = window.summary_pane.window()  # the main window itself
        chosen, chosen_filter = QFileDialog.getSaveFileName(parent, "Export report", str(start), filters)
        if chosen:
            path = Path(chosen)
            self.export_report(path, report_format(path, chosen_filter))

    # ---- copying ----

    @Slot()
    def copy_all_threads(self) -> bool:
        """Put every thread's stack, as the human report writes them, on the clipboard; rendered on the
        exports' thread like an export (a deep dump's text takes seconds). False when there is
        nothing to copy yet."""
        from inspector.core.report.human import render_threads

        state = self.final_state()
        if state is None:
            self.window._show_status("The walk is still running: copy the threads when it is over")
            return False
        self.window._show_status(f"Copying {len(state.threads)} threads…", 0)
        self.exports.submit(lambda: render_threads(state), self._threads_rendered, len(state.threads))
        return True

    def _threads_rendered(self, text: object, error: Exception | None, count: int) -> None:
        if error is not None or not isinstance(text, str):
            self.window.present_error("Cannot copy the threads", str(error))
            return
        QGuiApplication.clipboard().setText(text)
        self.window._show_status(f"Copied {count} threads")

    def copy_thread(self, index: int) -> str:
        """One thread's stack with its header line, as the Frames pane's Copy Whole Stack writes it."""
        doc = self.window.session.document
        header = thread_header(doc, index) if doc is not None else None
        if doc is None or header is None:
            return ""
        text = stack_text(doc.frames(index), header=header)
        QGuiApplication.clipboard().setText(text)
        return text

    def thread_menu(self, point: QPoint) -> QMenu:
        pane = self.window.thread_pane
        menu = QMenu(pane)
        index = pane.view.indexAt(point)
        row = pane.view.source_row(index) if index.isValid() else -1
        if row >= 0:
            menu.addAction(f"Copy Thread {row}'s Stack", lambda: self.copy_thread(row))
        menu.addAction(self.copy_all_action)
        menu.addSeparator()
        menu.addAction(self.window.crashing_thread_action)
        menu.addAction(self.export_action)
        return menu

    def copy_trace(self) -> str:
        """How the shown frame was found, as `stackwalk --human --trace` prints it under the frame."""
        from inspector.core.report.trace_text import frame_trace_lines

        window = self.window
        doc = window.session.document
        shown = window.unwind_pane.shown_frame
        if doc is None or shown is None:
            return ""
        thread, frame = shown
        frames = doc.frames(thread)
        view = doc.thread(thread)
        if not 0 <= frame < len(frames) or view is None:
            return ""
        last = frame == len(frames) - 1
        text = "\n".join(
            frame_trace_lines(
                frames,
                frame,
                termination=doc.termination(thread) if last else None,
                context_source=view.context_source,
            )
        )
        QGuiApplication.clipboard().setText(text + "\n")
        return text + "\n"

    def copy_trace_line(self) -> str:
        """The current line of the Unwind pane, its columns tab-separated."""
        view = self.window.unwind_pane.view
        current = view.currentIndex()
        model = view.model()
        if not current.isValid() or model is None:
            return ""
        text = "\t".join(
            str(current.siblingAtColumn(c).data() or "") for c in range(model.columnCount(current.parent()))
        )
        QGuiApplication.clipboard().setText(text)
        return text

    def unwind_menu(self, point: QPoint) -> QMenu:
        pane = self.window.unwind_pane
        menu = QMenu(pane)
        copy = menu.addAction("Copy Line", self.copy_trace_line)
        copy.setShortcut(QKeySequence(QKeySequence.StandardKey.Copy))
        menu.addAction("Copy Whole Trace", self.copy_trace)
        menu.addSeparator()
        menu.addAction("Expand All", pane.view.expandAll)
        menu.addAction("Collapse All", pane.view.collapseAll)
        return menu

    @Slot(QModelIndex)
    def _register_followed(self, index: QModelIndex) -> None:
        doc = self.window.session.document
        value = index.siblingAtColumn(RegisterTableModel.COL_VALUE).data(AddressRole)
        if doc is not None and isinstance(value, int):
            sentence = module_sentence(doc, value)
            if sentence is not None:
                self.window._show_status(sentence)

    # ---- appearance ----

    @Slot(bool)
    def set_dark_mode(self, dark: bool) -> None:
        """Force the dark (or light) palette, as `--color-scheme` does, and keep the choice for the next
        start."""
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        self.window.color_scheme = "dark" if dark else "light"
        self.window.settings.color_scheme = self.window.color_scheme
        self.window.settings.sync()
        app.styleHints().setColorScheme(Qt.ColorScheme.Dark if dark else Qt.ColorScheme.Light)
        apply_color_scheme(app, dark)
        self.dark_mode_action.setChecked(dark)
        # the palette reaches the widgets through events; rebuild our colours after it
        QTimer.singleShot(0, lambda: self.window.set_theme(Theme.for_scheme(dark, app.font())))


def install(window: MainWindow) -> WindowExtras:
    return WindowExtras(window)
