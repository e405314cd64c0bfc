"""The status bar's account of the analysis: what it is doing, its progress, Cancel, and how it ended.

`AnalysisStatus` follows the session's analysis signals: "Opening …", the progress bar
(symbols, threads, downloads), the counts once the dump is shown and when the walk is over,
and a failure (the window presents the error). The window keeps its title, menus and panes.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow, QToolButton

from inspector.core.process import Progress
from inspector.gui.document import AnalysisRequest
from inspector.gui.jobs import progress_fraction, progress_text
from inspector.gui.progress_indicator import ProgressIndicator
from inspector.gui.session import LoadFailure, Session

#: How long a passing message stays in the status bar.
STATUS_TIMEOUT_MS = 8000


class AnalysisStatusBar(QObject):
    def __init__(
        self,
        window: QMainWindow,
        session: Session,
        cancel_action: QAction,
        present_error: Callable[[str, str], None],
    ) -> None:
        super().__init__(window)
        self.session = session
        self._cancel_action = cancel_action
        self._present_error = present_error
        self._bar = window.statusBar()
        self._bar.setObjectName("statusBar")
        self.progress_bar = ProgressIndicator(window)
        self.progress_bar.setObjectName("analysisProgress")
        self.progress_bar.setMaximumWidth(280)
        self.progress_bar.setMinimumWidth(220)
        self.cancel_button = QToolButton(window)
        self.cancel_button.setDefaultAction(cancel_action)
        self.cancel_button.setAutoRaise(True)
        self._bar.addPermanentWidget(self.progress_bar)
        self._bar.addPermanentWidget(self.cancel_button)
        session.analysis_started.connect(self._on_analysis_started)
        session.document_changed.connect(self._on_document_changed)
        session.progress_changed.connect(self._on_progress)
        session.analysis_finished.connect(self._on_analysis_finished)
        session.analysis_cancelled.connect(self._on_analysis_cancelled)
        session.analysis_failed.connect(self._on_analysis_failed)
        session.busy_changed.connect(self._on_busy_changed)
        self._on_busy_changed(session.is_busy)

    def show(self, text: str, timeout_ms: int = STATUS_TIMEOUT_MS) -> None:
        self._bar.showMessage(text, timeout_ms)

    def text(self) -> str:
        return self._bar.currentMessage()

    @Slot(object)
    def _on_analysis_started(self, request: object) -> None:
        assert isinstance(request, AnalysisRequest)
        self.show(f"Opening {request.dump_path.name}…", 0)
        self.progress_bar.setRange(0, 0)
        self.progress_bar.setFormat("opening…")

    @Slot()
    def _on_document_changed(self) -> None:
        doc = self.session.document
        if doc is not None:
            state = doc.state
            counts = f"{len(state.threads)} threads, {len(state.modules)} modules"
            self.show(f"{doc.path.name}: {counts}; walking the stacks…", 0)

    @Slot(object)
    def _on_progress(self, progress: object) -> None:
        assert isinstance(progress, Progress)
        fraction = progress_fraction(progress)
        if fraction is None:
            self.progress_bar.setRange(0, 0)
            self.progress_bar.setFormat(progress_text(progress) or "walking…")
            return
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setValue(round(fraction * 1000))
        self.progress_bar.setFormat(progress_text(progress))

    @Slot()
    def _on_analysis_finished(self) -> None:
        doc = self.session.document
        if doc is None:
            self.show("Done")
            return
        state = doc.state
        lacking = len(doc.modules_lacking_symbols())
        problems = len(doc.problems())
        parts = [f"{doc.path.name}: {len(state.threads)} threads, {len(state.modules)} modules"]
        if lacking:
            parts.append(f"{lacking} on the stacks without symbols")
        if problems:
            parts.append(f"{problems} problem{'s' if problems != 1 else ''} (see Problems)")
        self.show(", ".join(parts), 0)

    @Slot()
    def _on_analysis_cancelled(self) -> None:
        self.show("Analysis cancelled")

    @Slot(object)
    def _on_analysis_failed(self, failure: object) -> None:
        assert isinstance(failure, LoadFailure)
        doc = self.session.document
        if failure.document_shown:
            title = "Analysis failed"
            text = f"The analysis of {failure.path.name} stopped: {failure.message}"
        else:
            title = "Cannot open dump"
            text = failure.message
            if doc is not None:
                text += f"\n\n{doc.path.name} is still shown."
        self.show(f"{title}: {failure.message}", 0)
        self._present_error(title, text)

    @Slot(bool)
    def _on_busy_changed(self, busy: bool) -> None:
        self._cancel_action.setEnabled(busy)
        self.progress_bar.setVisible(busy)
        self.cancel_button.setVisible(busy)
        if not busy:
            self.progress_bar.reset()
