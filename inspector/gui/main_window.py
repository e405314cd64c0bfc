"""The main window: dockable panes around the session, menus, status bar with progress, drops, settings.

The window composes: it builds the panes, puts each in a dock, and wires
window-level actions. Panes link to each other only through the `Session`.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

from PySide6.QtCore import QByteArray, Qt, QTimer, Slot
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDragLeaveEvent,
    QDragMoveEvent,
    QDropEvent,
    QFontMetrics,
    QKeySequence,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMenu,
    QMessageBox,
    QSizePolicy,
    QToolBar,
    QWidget,
)

from inspector import __version__
from inspector.gui.analysis_settings import AnalysisSettings
from inspector.gui.analysis_status import STATUS_TIMEOUT_MS, AnalysisStatusBar
from inspector.gui.crash_set_window import CrashSets
from inspector.gui.default_layout import DefaultLayout, fitting_size
from inspector.gui.file_drop import DropOverlay, DropPlan, plan_drop
from inspector.gui.panes.frame_pane import FramePane
from inspector.gui.panes.memory_pane import MemoryPane
from inspector.gui.panes.module_pane import ModulePane
from inspector.gui.panes.problem_pane import ProblemPane
from inspector.gui.panes.register_pane import RegisterPane
from inspector.gui.panes.stack_plot import StackPlotPane
from inspector.gui.panes.summary_pane import SummaryPane
from inspector.gui.panes.thread_pane import ThreadPane
from inspector.gui.panes.unwind_pane import UnwindPane
from inspector.gui.preferences_dialog import PreferencesDialog, SymbolPreferences
from inspector.gui.session import Session
from inspector.gui.settings import STATE_VERSION, Settings
from inspector.gui.theme import Theme, apply_color_scheme, wants_dark
from inspector.gui.why_panes import WhyPanes
from inspector.gui.window_extras import install as install_extras
from inspector.gui.window_work import WalkCourteousWindow

log = logging.getLogger(__name__)

WINDOW_TITLE = "Crash Inspector"
DUMP_FILTER = (
    "Crash dumps (*.dmp *.mdmp *.txt *.log);;Minidumps (*.dmp *.mdmp);;"
    "Microdump logs (*.txt *.log);;All files (*)"
)


class MainWindow(WalkCourteousWindow):
    def __init__(
        self,
        session: Session,
        settings: Settings,
        *,
        session_symbol_paths: Sequence[Path] = (),
        interactive: bool = True,
        color_scheme: str = "system",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.setWindowTitle(WINDOW_TITLE)
        self.setAnimated(False)  # sliding docks: a dozen relayouts and whole-window paints per change
        self.session = session
        self.settings = settings
        #: symbol paths, cache, servers and walk options: what the session analyses with
        self.analysis_settings = AnalysisSettings(settings, session, session_symbol_paths)
        #: False: errors go to the status bar and the log only (screenshots, scripted runs)
        self.interactive = interactive
        self.message_box: QMessageBox | None = None
        #: "system" follows the desktop's light/dark setting as it changes; "light" / "dark" force one
        self.color_scheme = color_scheme
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        self.theme = Theme.for_scheme(wants_dark(app, color_scheme), app.font())

        self.setDockNestingEnabled(True)
        self.setDocumentMode(True)
        self.setAcceptDrops(True)
        placeholder = QWidget(self)
        placeholder.setObjectName("centralPlaceholder")
        placeholder.setMaximumSize(0, 0)
        self.setCentralWidget(placeholder)
        placeholder.hide()

        theme = self.theme
        self.summary_pane = SummaryPane(session, theme)
        self.thread_pane = ThreadPane(session, theme)
        self.memory_pane = MemoryPane(session, theme, words_per_row=settings.words_per_row)
        self.register_pane = RegisterPane(session, theme)
        self.module_pane = ModulePane(session, theme)
        self.problem_pane = ProblemPane(session, theme)
        self.frame_pane = FramePane(session, theme)
        self.unwind_pane = UnwindPane(session, theme)
        self.plot_pane = StackPlotPane(session, theme)
        self.docks: dict[str, QDockWidget] = {}
        self._build_docks()
        # File › Open Folder of Dumps…, dropped folders of dumps
        self.crash_sets = CrashSets(
            self, self.analysis_settings, open_dump=self.open_dump, theme=lambda: self.theme
        )
        self._build_actions()
        self._build_menus()
        self._build_tool_bar()
        self.analysis_status = AnalysisStatusBar(self, session, self.cancel_action, self.present_error)
        self.progress_bar = self.analysis_status.progress_bar
        self.cancel_button = self.analysis_status.cancel_button
        self.drop_overlay = DropOverlay(self)

        self.summary_pane.missing_symbols_requested.connect(self.show_modules_lacking_symbols)
        self.extras = install_extras(self)
        self.memory_pane.message.connect(self._show_status)
        self.memory_pane.words_per_row_changed.connect(self._save_words_per_row)
        self.problem_pane.count_changed.connect(self._on_problem_count)
        session.document_changed.connect(self._on_document_changed)
        session.trace_focus_changed.connect(self._update_decision)
        session.thread_selected.connect(self._update_decision)
        app.styleHints().colorSchemeChanged.connect(self._on_color_scheme_changed)

        self.default_layout = DefaultLayout(
            self,
            self.docks,
            self.thread_pane.height_for_rows,
            lambda: session.document.thread_count if session.document is not None else None,
        )
        self.resize(*fitting_size(self))
        self._default_state = self.saveState(STATE_VERSION)
        self._shown_once = False
        self._restored_state = False
        self._restore_layout()
        self._set_tab_order()
        self._update_recent_menu()

    # ---- construction ----

    def _dock(self, key: str, title: str, pane: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"{key}Dock")
        dock.setWidget(pane)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetClosable
            | QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
        )
        self.addDockWidget(area, dock)
        self.docks[key] = dock
        return dock

    def _build_docks(self) -> None:
        area = Qt.DockWidgetArea
        self.setCorner(Qt.Corner.TopLeftCorner, area.TopDockWidgetArea)
        self.setCorner(Qt.Corner.TopRightCorner, area.TopDockWidgetArea)
        self.setCorner(Qt.Corner.BottomLeftCorner, area.BottomDockWidgetArea)
        self.setCorner(Qt.Corner.BottomRightCorner, area.BottomDockWidgetArea)
        summary = self._dock("summary", "Summary", self.summary_pane, area.TopDockWidgetArea)
        threads = self._dock("threads", "Threads", self.thread_pane, area.LeftDockWidgetArea)
        frames = self._dock("frames", "Frames", self.frame_pane, area.LeftDockWidgetArea)
        unwind = self._dock("unwind", "Unwind", self.unwind_pane, area.RightDockWidgetArea)
        memory = self._dock("memory", "Stack Memory", self.memory_pane, area.RightDockWidgetArea)
        registers = self._dock("registers", "Registers", self.register_pane, area.RightDockWidgetArea)
        plot = self._dock("plot", "Stack Layout", self.plot_pane, area.RightDockWidgetArea)
        modules = self._dock("modules", "Modules", self.module_pane, area.BottomDockWidgetArea)
        problems = self._dock("problems", "Problems", self.problem_pane, area.BottomDockWidgetArea)
        self.splitDockWidget(threads, frames, Qt.Orientation.Vertical)
        self.splitDockWidget(unwind, memory, Qt.Orientation.Horizontal)
        self.splitDockWidget(unwind, registers, Qt.Orientation.Vertical)
        self.splitDockWidget(memory, plot, Qt.Orientation.Vertical)
        self.tabifyDockWidget(modules, problems)
        self.why = WhyPanes(self.session, self.theme, self._dock, problems)  # Disassembly, Source (issue 15)
        modules.raise_()
        summary.setFeatures(summary.features() & ~QDockWidget.DockWidgetFeature.DockWidgetFloatable)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._shown_once:
            self._shown_once = True
            if not self._restored_state:
                self.default_layout.apply_when_shown()

    def _action(
        self,
        text: str,
        slot: object,
        shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None,
        *,
        tip: str = "",
    ) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(tip)
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    def _build_actions(self) -> None:
        key = QKeySequence.StandardKey
        self.open_action = self._action("&Open…", self.choose_dump, key.Open, tip="Open a minidump")
        self.reanalyze_action = self._action(
            "&Reanalyze", self.session.reanalyze, "F5", tip="Run the analysis of the open dump again"
        )
        self.cancel_action = self._action(
            "&Cancel", self.session.cancel, "Esc", tip="Stop the running analysis"
        )
        self.cancel_action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        self.add_symbol_folder_action = self._action(
            "Add Symbol &Folder…", self.choose_symbol_folder, tip="Search a folder for symbol files"
        )
        self.add_symbol_file_action = self._action(
            "Add Symbol F&ile…", self.choose_symbol_files, tip="Use single .sym files"
        )
        self.preferences_action = self._action("&Preferences…", self.edit_preferences, key.Preferences)
        if QKeySequence(key.Preferences).isEmpty():
            self.preferences_action.setShortcut(QKeySequence("Ctrl+,"))
        self.quit_action = self._action("&Quit", self.close, key.Quit)
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        self.go_to_address_action = self._action(
            "Go to &Address…",
            self.focus_go_to_address,
            "Ctrl+G",
            tip="Show an address in the stack memory pane",
        )
        self.crashing_thread_action = self._action(
            "&Crashing Thread", self.select_crashing_thread, "Ctrl+Shift+C", tip="Select the crashing thread"
        )
        self.next_decision_action = self._action(
            "&Next Decision",
            lambda: self.step_decision(1),
            "F10",
            tip="Show the next decision of the selected thread's walk (F10)",
        )
        self.previous_decision_action = self._action(
            "&Previous Decision",
            lambda: self.step_decision(-1),
            "Shift+F10",
            tip="Show the previous decision of the selected thread's walk (Shift+F10)",
        )
        self.next_frame_action = self._action(
            "Next &Frame", lambda: self.session.step_frame(1), "F11", tip="Select the caller frame (F11)"
        )
        self.previous_frame_action = self._action(
            "Previous F&rame",
            lambda: self.session.step_frame(-1),
            "Shift+F11",
            tip="Select the callee frame (Shift+F11)",
        )
        self.reset_layout_action = self._action("&Reset Layout", self.reset_layout)
        self.about_action = self._action("&About Crash Inspector", self.show_about)
        self.pane_actions: dict[str, QAction] = {}
        for number, (pane_key, title) in enumerate(
            (
                ("threads", "Threads"),
                ("memory", "Stack Memory"),
                ("registers", "Registers"),
                ("modules", "Modules"),
                ("problems", "Problems"),
                ("summary", "Summary"),
                ("frames", "Frames"),
                ("unwind", "Unwind"),
                ("plot", "Stack Layout"),
            ),
            start=1,
        ):
            action = self._action(
                f"Go to {title}", lambda _=False, k=pane_key: self.focus_pane(k), f"Alt+{number}"
            )
            self.pane_actions[pane_key] = action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self.open_action)
        file_menu.addAction(self.crash_sets.open_folder_action)
        self.recent_menu = QMenu("Open &Recent", self)
        self.recent_menu.setObjectName("recentMenu")
        file_menu.addMenu(self.recent_menu)
        file_menu.addSeparator()
        file_menu.addAction(self.reanalyze_action)
        file_menu.addAction(self.cancel_action)
        file_menu.addSeparator()
        file_menu.addAction(self.add_symbol_folder_action)
        file_menu.addAction(self.add_symbol_file_action)
        file_menu.addAction(self.preferences_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)

        go_menu = bar.addMenu("&Go")
        go_menu.addAction(self.go_to_address_action)
        go_menu.addAction(self.crashing_thread_action)
        go_menu.addSeparator()
        for action in self.pane_actions.values():
            go_menu.addAction(action)

        walk_menu = bar.addMenu("&Walk")
        walk_menu.addAction(self.next_decision_action)
        walk_menu.addAction(self.previous_decision_action)
        walk_menu.addSeparator()
        walk_menu.addAction(self.next_frame_action)
        walk_menu.addAction(self.previous_frame_action)

        view_menu = bar.addMenu("&View")
        for dock in self.docks.values():
            view_menu.addAction(dock.toggleViewAction())
        view_menu.addSeparator()
        view_menu.addAction(self.reset_layout_action)

        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self.about_action)

    def _build_tool_bar(self) -> None:
        bar = QToolBar("Walk", self)
        bar.setObjectName("walkToolBar")
        bar.setMovable(False)
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        for action in (
            self.previous_frame_action,
            self.previous_decision_action,
            self.next_decision_action,
            self.next_frame_action,
        ):
            bar.addAction(action)
        self.previous_decision_action.setIconText("◀ Decision")
        self.next_decision_action.setIconText("Decision ▶")
        self.previous_frame_action.setIconText("◀◀ Frame")
        self.next_frame_action.setIconText("Frame ▶▶")
        self.decision_label = QLabel("F10 steps through every decision of the selected thread's walk", self)
        self.decision_label.setObjectName("decisionLabel")
        self.decision_label.setContentsMargins(10, 0, 6, 0)
        # A toolbar gives a widget its size hint at most; an Ignored policy took the label's width away.
        # Expanding with room for "decision 1234 of 1234: frame 123" keeps the position always visible.
        self.decision_label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.decision_label.setMinimumWidth(
            QFontMetrics(self.decision_label.font()).horizontalAdvance("decision 1234 of 1234: frame 123")
            + 16
        )
        bar.addWidget(self.decision_label)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
        self.walk_tool_bar = bar

    def step_decision(self, delta: int) -> None:
        """Next (+1) or previous (-1) decision; the panes follow through the session."""
        position = self.session.step_decision(delta)
        if position is None:
            self._show_status("Nothing walked yet in this thread")

    @Slot()
    def _update_decision(self, *_: object) -> None:
        position = self.session.decision_position()
        if position is None:
            self.decision_label.setText("F10 steps through every decision of the selected thread's walk")
            self.decision_label.setToolTip("")
            return
        self.decision_label.setText(position.text)
        self.decision_label.setToolTip(position.text)

    def _set_tab_order(self) -> None:
        chain: list[QWidget] = [
            self.thread_pane.view,
            self.thread_pane.filter,
            self.frame_pane.view,
            self.frame_pane.filter,
            self.unwind_pane.view,
            self.memory_pane.view,
            self.memory_pane.go_to,
            self.memory_pane.words,
            self.register_pane.view,
            self.plot_pane.plot,
            self.module_pane.view,
            self.module_pane.filter,
            self.module_pane.lacking_only,
            self.problem_pane.view,
        ]
        for first, second in itertools.pairwise(chain):
            self.setTabOrder(first, second)

    # ---- layout persistence ----

    def _restore_layout(self) -> None:
        geometry = self.settings.window_geometry
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = self.settings.window_state
        if state is not None:
            self._restored_state = self.restoreState(state, STATE_VERSION)
            if not self._restored_state:
                log.info("saved window layout is from another version; using the default layout")

    def save_layout(self) -> None:
        self.settings.window_geometry = self.saveGeometry()
        self.settings.window_state = self.saveState(STATE_VERSION)
        self.settings.sync()

    @Slot()
    def reset_layout(self) -> None:
        self.restoreState(QByteArray(self._default_state), STATE_VERSION)
        for dock in self.docks.values():
            dock.show()
        self.docks["modules"].raise_()
        self.default_layout.apply()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.interactive:  # a scripted run (screenshot) leaves the user's layout alone
            self.save_layout()
        self.crash_sets.shutdown()
        self.session.shutdown()
        super().closeEvent(event)

    # ---- opening dumps ----

    def open_dump(self, path: Path | str) -> None:
        """Open a dump in the worker; on error the current dump stays shown and the error is reported."""
        path = Path(path)
        self.session.open_dump(path)

    @Slot()
    def choose_dump(self) -> None:
        start = self.settings.last_directory
        name, _ = QFileDialog.getOpenFileName(
            self, "Open a minidump or microdump", str(start or ""), DUMP_FILTER
        )
        if name:
            self.settings.last_directory = Path(name).parent
            self.open_dump(Path(name))

    def _update_recent_menu(self) -> None:
        menu = self.recent_menu
        menu.clear()
        files = self.settings.recent_files
        for number, path in enumerate(files, start=1):
            prefix = f"&{number} " if number < 10 else ""
            action = menu.addAction(f"{prefix}{path.name}")
            action.setToolTip(str(path))
            action.setStatusTip(str(path))
            action.triggered.connect(lambda _=False, p=path: self.open_dump(p))
        if files:
            menu.addSeparator()
            menu.addAction("Clear Recent Files", self._clear_recent)
        menu.setEnabled(bool(files))

    @Slot()
    def _clear_recent(self) -> None:
        self.settings.clear_recent_files()
        self.settings.sync()
        self._update_recent_menu()

    # ---- symbol paths and preferences (kept by `AnalysisSettings`) ----

    @property
    def session_symbol_paths(self) -> tuple[Path, ...]:
        """Symbol paths used in this session only (from the command line); searched after the saved ones."""
        return self.analysis_settings.session_symbol_paths

    def effective_symbol_paths(self) -> list[Path]:
        return self.analysis_settings.effective_symbol_paths()

    def push_symbol_settings(self, *, reanalyze: bool = False) -> tuple[bool, bool]:
        """Give the session every analysis setting (see `AnalysisSettings.push`); (paths, servers) changed."""
        pushed = self.analysis_settings.push(reanalyze=reanalyze)
        return pushed.paths, pushed.servers

    def add_session_symbol_paths(self, paths: Iterable[Path]) -> None:
        """Also search `paths`, for this session only (not saved); the next analysis uses them."""
        self.analysis_settings.add_session_symbol_paths(paths)

    def add_symbol_paths(self, paths: Iterable[Path], *, reanalyze: bool = True) -> list[Path]:
        """Save these symbol paths (folders or .sym files) and (by default) re-run the analysis;
        returns those added."""
        added, message = self.analysis_settings.add_symbol_paths(paths, reanalyze=reanalyze)
        if message is not None:
            self._show_status(message)
        return added

    @Slot()
    def choose_symbol_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self, "Add a symbol folder", str(self.settings.last_directory or "")
        )
        if folder:
            self.add_symbol_paths([Path(folder)])

    @Slot()
    def choose_symbol_files(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(
            self,
            "Add symbol files",
            str(self.settings.last_directory or ""),
            "Breakpad symbols (*.sym);;All files (*)",
        )
        if files:
            self.add_symbol_paths(Path(f) for f in files)

    def preferences_dialog(self) -> PreferencesDialog:
        settings = self.analysis_settings
        return PreferencesDialog(
            settings.preferences(), self, session_only_paths=settings.session_only_paths()
        )

    @Slot()
    def edit_preferences(self) -> None:
        dialog = self.preferences_dialog()
        dialog.accepted.connect(lambda: self.apply_preferences(dialog.preferences()))
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()

    def apply_preferences(self, prefs: SymbolPreferences) -> None:
        message = self.analysis_settings.apply(prefs)
        if message is not None:
            self._show_status(message)

    # ---- drag and drop ----

    def _drop_plan(self, event: QDragEnterEvent | QDragMoveEvent | QDropEvent) -> DropPlan | None:
        mime = event.mimeData()
        if not mime.hasUrls():
            return None
        plan = plan_drop(mime.urls())
        return None if plan.empty else plan

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        plan = self._drop_plan(event)
        if plan is None:
            event.ignore()
            return
        event.acceptProposedAction()
        self.drop_overlay.show_plan(plan)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragLeaveEvent(self, event: QDragLeaveEvent) -> None:
        self.drop_overlay.hide()
        event.accept()

    def dropEvent(self, event: QDropEvent) -> None:
        self.drop_overlay.hide()
        plan = self._drop_plan(event)
        if plan is None:
            event.ignore()
            return
        event.acceptProposedAction()
        self.apply_drop(plan)

    def apply_drop(self, plan: DropPlan) -> None:
        """Add dropped symbol paths, then open the first dropped dump (one analysis run for both);
        dropped folders of dumps open as a crash set (after the symbol paths: triaged with them)."""
        if plan.symbol_paths:
            self.add_symbol_paths(plan.symbol_paths, reanalyze=not plan.dumps)
        if plan.dump_folders:
            self.crash_sets.open(plan.dump_folders)
        if plan.dumps:
            self.open_dump(plan.dumps[0])

    # ---- panes and navigation ----

    @Slot()
    def focus_pane(self, key: str) -> None:
        dock = self.docks[key]
        dock.show()
        dock.raise_()
        widget = dock.widget()
        if widget is not None:
            widget.setFocus(Qt.FocusReason.ShortcutFocusReason)

    @Slot()
    def focus_go_to_address(self) -> None:
        self.focus_pane("memory")
        self.memory_pane.focus_go_to()

    @Slot()
    def select_crashing_thread(self) -> None:
        doc = self.session.document
        crashing = doc.crashing_thread if doc is not None else None
        if crashing is None:
            self._show_status("This dump names no crashing thread")
            return
        self.session.select_thread(crashing.index)
        self.focus_pane("threads")

    @Slot()
    def show_modules_lacking_symbols(self) -> None:
        self.module_pane.show_lacking_only(True)
        self.focus_pane("modules")

    @Slot()
    def show_about(self) -> None:
        self._message(
            QMessageBox.Icon.Information,
            "About Crash Inspector",
            f"Crash Inspector {__version__}\n\nInspect native crash minidumps with Breakpad symbols, "
            "and see why every frame was found.",
        )

    # ---- session feedback ----

    def _show_status(self, text: str, timeout_ms: int = STATUS_TIMEOUT_MS) -> None:
        self.analysis_status.show(text, timeout_ms)

    def status_text(self) -> str:
        return self.analysis_status.text()

    @Slot()
    def _on_document_changed(self) -> None:
        doc = self.session.document
        if doc is None:
            self.setWindowTitle(WINDOW_TITLE)
            return
        self.setWindowTitle(f"{doc.path.name} — {WINDOW_TITLE}")
        if self._shown_once and not self._restored_state:
            QTimer.singleShot(0, self.default_layout.fit_threads)
        self.setWindowFilePath(str(doc.path))
        if self.interactive:
            self.settings.add_recent_file(doc.path)
            self.settings.sync()
            self._update_recent_menu()

    @Slot(int)
    def _on_problem_count(self, count: int) -> None:
        dock = self.docks["problems"]
        dock.setWindowTitle(f"Problems ({count})" if count else "Problems")
        doc = self.session.document
        if count and doc is not None and any(p.source == "dump" for p in doc.state.problems):
            dock.show()
            dock.raise_()

    @Slot(int)
    def _save_words_per_row(self, words: int) -> None:
        self.settings.words_per_row = words

    # ---- errors ----

    def present_error(self, title: str, text: str) -> None:
        """Tell the user, without blocking: a window-modal message box (interactive) or the log."""
        log.warning("%s: %s", title, text.replace("\n\n", " "))
        if self.interactive:
            self._message(QMessageBox.Icon.Warning, title, text)

    def _message(self, icon: QMessageBox.Icon, title: str, text: str) -> None:
        box = QMessageBox(icon, title, text, QMessageBox.StandardButton.Ok, self)
        box.setObjectName("messageBox")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.message_box = box
        box.open()

    # ---- appearance ----

    @Slot(Qt.ColorScheme)
    def _on_color_scheme_changed(self, scheme: Qt.ColorScheme) -> None:
        if self.color_scheme != "system":
            return
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        dark = wants_dark(app)
        apply_color_scheme(app, dark)
        # The palette change reaches the widgets through events; rebuild our colours after it.
        QTimer.singleShot(0, lambda: self.set_theme(Theme.for_scheme(dark, app.font())))

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        for pane in (
            self.summary_pane,
            self.thread_pane,
            self.memory_pane,
            self.register_pane,
            self.module_pane,
            self.problem_pane,
            self.frame_pane,
            self.unwind_pane,
            self.plot_pane,
            self.why,
        ):
            pane.set_theme(theme)
