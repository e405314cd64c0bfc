"""Summary header: what crashed, where, on which system, and how many modules lack symbols."""

from __future__ import annotations

import html
import re
from typing import ClassVar

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QGridLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from inspector.core.process import UNKNOWN_SYSTEM
from inspector.core.process.damage import DumpDamage, dump_damage
from inspector.core.report.analysis_text import analysis_sentence, shown_analysis
from inspector.gui.document import AnalysisStatus, Document
from inspector.gui.lookups import address_text, dump_time_text
from inspector.gui.session import Session
from inspector.gui.theme import Theme

_LINK_THREAD = "thread:"
_LINK_MISSING = "missing-symbols"
_LINK_PROBLEMS = "problems"
#: fields on a row of their own, across both columns: (row, 0)
_FULL_WIDTH_ROWS = {"symbols": (3, 0), "assertion": (4, 0)}
_LINK_ADD_SYMBOLS = "add-symbols"


def format_uptime(seconds: int) -> str:
    """`0 s`, `42 s`, `3 min 5 s`, `2 h 1 min`, `3 d 4 h`."""
    if seconds < 60:
        return f"{seconds} s"
    minutes, s = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {s} s"
    hours, m = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {m} min"
    days, h = divmod(hours, 24)
    return f"{days} d {h} h"


class SummaryPane(QWidget):
    #: the user clicked "N modules lack symbols"
    missing_symbols_requested = Signal()
    #: the user clicked the damage warning
    problems_requested = Signal()
    #: the user clicked "Add a symbol folder…"
    add_symbols_requested = Signal()

    FIELDS = ("file", "thread", "os", "process", "cpu", "symbols", "assertion")
    LABELS: ClassVar[dict[str, str]] = {
        "file": "Dump",
        "thread": "Crashing thread",
        "os": "OS",
        "process": "Process",
        "cpu": "CPU",
        "symbols": "Symbols",
        "assertion": "Assertion",
    }

    def __init__(self, session: Session, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("summaryPane")
        self.session = session
        self._theme = theme
        # a damaged dump leads with its damage: what the headline and the panes below can be trusted for
        self.damage = QLabel(self)
        self.damage.setObjectName("damageWarning")
        self.damage.setWordWrap(True)
        self.damage.setTextFormat(Qt.TextFormat.RichText)
        self.damage.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.LinksAccessibleByMouse
        )
        self.damage.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.damage.linkActivated.connect(self._on_link)
        self.damage.hide()
        self.headline = QLabel(self)
        self.headline.setObjectName("crashHeadline")
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.headline.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        font = self.headline.font()
        font.setPointSizeF(font.pointSizeF() * 1.35)
        font.setBold(True)
        self.headline.setFont(font)

        #: the crash analysis in one sentence (`report.analysis_text.analysis_sentence`)
        self.why = QLabel(self)
        self.why.setObjectName("crashAnalysis")
        self.why.setWordWrap(True)
        self.why.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.why.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.why.hide()

        #: "Stack overflow: …" when the crashing thread's walk gives evidence of one (`explain.triage`)
        self.overflow = QLabel(self)
        self.overflow.setObjectName("stackOverflow")
        self.overflow.setWordWrap(True)
        self.overflow.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.overflow.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        bold = self.overflow.font()
        bold.setBold(True)
        self.overflow.setFont(bold)
        self.overflow.setStyleSheet(f"color: {self._theme.crash.name()};")
        self.overflow.hide()

        self.values: dict[str, QLabel] = {}
        self._captions: dict[str, QLabel] = {}
        grid = QGridLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(10)
        grid.setVerticalSpacing(2)
        for i, key in enumerate(self.FIELDS):
            caption = QLabel(f"{self.LABELS[key]}:", self)
            caption.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
            caption.setStyleSheet("color: palette(placeholder-text);")
            value = QLabel(self)
            value.setObjectName(f"summary_{key}")
            value.setTextFormat(Qt.TextFormat.RichText)
            value.setTextInteractionFlags(
                Qt.TextInteractionFlag.TextSelectableByMouse
                | Qt.TextInteractionFlag.LinksAccessibleByMouse
                | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
            )
            value.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            value.linkActivated.connect(self._on_link)
            caption.setBuddy(value)
            # the symbols row says what is missing and offers the way out: it gets the whole width
            row, pair = _FULL_WIDTH_ROWS.get(key, (i // 2, i % 2))
            grid.addWidget(caption, row, pair * 2)
            if key in _FULL_WIDTH_ROWS:
                grid.addWidget(value, row, 1, 1, 3)
            else:
                grid.addWidget(value, row, pair * 2 + 1)
            self.values[key] = value
            self._captions[key] = caption
        # keyboard: focus lands on the crashing-thread link; Tab moves through the links (Enter follows)
        self.setFocusProxy(self.values["thread"])
        self.setTabOrder(self.values["thread"], self.values["symbols"])
        grid.setColumnStretch(1, 3)
        grid.setColumnStretch(3, 2)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 6)
        layout.setSpacing(4)
        layout.addWidget(self.damage)
        layout.addWidget(self.headline)
        layout.addWidget(self.overflow)
        layout.addWidget(self.why)
        layout.addLayout(grid)

        session.document_changed.connect(self.refresh)
        session.symbols_updated.connect(self._refresh_symbols)
        session.analysis_finished.connect(self._refresh_symbols)
        session.analysis_cancelled.connect(self._refresh_symbols)
        session.analysis_failed.connect(self._refresh_symbols)
        session.thread_walked.connect(self._refresh_symbols)
        session.thread_walked.connect(self._refresh_overflow)
        session.analysis_finished.connect(self._refresh_overflow)
        self.refresh()

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.overflow.setStyleSheet(f"color: {theme.crash.name()};")
        self.refresh()

    def text(self) -> str:
        """Everything the header says, as plain text (tests, copy)."""
        lines = [_plain(self.damage.text())] if not self.damage.isHidden() else []
        lines.append(self.headline.text())
        lines += [self.overflow.text()] if not self.overflow.isHidden() else []
        lines += [self.why.text()] if not self.why.isHidden() else []
        for key in self.FIELDS:
            label = self.values[key]
            if not label.isHidden():
                lines.append(f"{self.LABELS[key]}: {_plain(label.text())}")
        return "\n".join(lines)

    def _set(self, key: str, rich: str | None) -> None:
        label, caption = self.values[key], self._captions[key]
        label.setText(rich or "")
        shown = rich is not None
        label.setVisible(shown)
        caption.setVisible(shown)

    @Slot()
    def refresh(self) -> None:
        doc = self.session.document
        if doc is None:
            self.damage.hide()
            self.headline.setText("No dump open")
            self.headline.setStyleSheet("")
            self.why.hide()
            self.overflow.hide()
            for key in self.FIELDS:
                self._set(key, None)
            self._set("file", "Open a minidump with File › Open (Ctrl+O) or drop a .dmp file here")
            self._fit_height()
            return
        state = doc.state
        crash = state.crash
        crashing = doc.crashing_thread
        damage = dump_damage(state)
        self._show_damage(damage)
        hidden_by_damage = damage.headline()
        if crash is not None:
            # a microdump without its R line says it crashed, but not why
            reason = crash.reason or "Crash (no reason recorded)"
            self.headline.setText(f"{reason} at {address_text(state, crash.address)}")
            self.headline.setStyleSheet(f"color: {self._theme.crash.name()};")
        elif hidden_by_damage is not None:
            # "written on request" would be a guess: the exception may be what was lost
            self.headline.setText(hidden_by_damage)
            self.headline.setStyleSheet(f"color: {self._theme.crash.name()};")
        else:
            self.headline.setText("No exception recorded: the dump was written on request")
            self.headline.setStyleSheet("")
        why = analysis_sentence(
            shown_analysis(state.analysis, all_cpus=True),
            hex,  # 0x10, not 0x0000000000000010: the sentence is read, not lined up
            crash_address=None if crash is None else crash.address,
        )
        self.why.setText(f"Why: {why}" if why else "")
        self.why.setVisible(why is not None)
        written = dump_time_text(state)
        self._set(
            "file",
            f"{_e(doc.path.name)} — {state.dump_size:,} bytes"
            + (f", written {_e(written)}" if written else ""),
        )
        if crashing is not None:
            self._set(
                "thread",
                f'<a href="{_LINK_THREAD}{crashing.index}">{_e(crashing.label)}</a>'
                f" (thread id {crashing.thread_id})",
            )
        elif crash is not None:
            self._set("thread", "unknown (the exception names no thread of the thread list)")
        elif hidden_by_damage is not None:
            self._set("thread", "unknown (the dump is damaged where the exception would say)")
        else:
            self._set("thread", "none")
        system = state.system
        if system.os_name != UNKNOWN_SYSTEM.os_name:
            self._set("os", _e(f"{system.os_name} {system.os_version or ''}".strip()))
        else:
            self._set("os", "unknown (no system information in the dump)")
        cpu = " · ".join(
            part
            for part in (
                system.cpu_arch if system.cpu_arch != UNKNOWN_SYSTEM.cpu_arch else None,
                system.cpu_info,
                f"{system.cpu_count} CPUs" if system.cpu_count else None,
            )
            if part
        )
        self._set("cpu", _e(cpu) if cpu else "unknown")
        process = []
        if state.process_id is not None:
            process.append(f"pid {state.process_id}")
        if state.process_uptime is not None:
            process.append(f"up {format_uptime(state.process_uptime)} when the dump was written")
        self._set("process", _e(", ".join(process)) if process else "unknown")
        self._set("assertion", _e(state.assertion) if state.assertion else None)
        self._refresh_symbols()
        self._refresh_overflow()
        self._fit_height()

    def _show_damage(self, damage: DumpDamage) -> None:
        if not damage.damaged:
            self.damage.hide()
            return
        theme = self._theme
        first, *rest = damage.sentences()
        self.damage.setText(
            f'<span style="color: {theme.crash.name()};"><b>⚠ {_e(first)}</b></span> '
            f'{_e(" ".join([*rest, damage.count_text()]))} <a href="{_LINK_PROBLEMS}">Show the problems</a>'
        )
        self.damage.setStyleSheet(
            f"QLabel#damageWarning {{ border: 1px solid {theme.crash.name()}; "
            "border-radius: 3px; padding: 3px; }"
        )
        self.damage.show()

    def _fit_height(self) -> None:
        """The header is as tall as what it says (a dock would otherwise stretch it with empty space, or
        squeeze the rows under a damage warning that wraps onto several lines)."""
        layout = self.layout()
        if layout is None:
            return
        layout.activate()
        if layout.hasHeightForWidth() and self.width() > 0:
            height = layout.totalHeightForWidth(self.width())
        else:
            height = max(layout.sizeHint().height(), layout.minimumSize().height())
        self.setMaximumHeight(height)
        self.setMinimumHeight(height if not self.damage.isHidden() else 0)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width() and not self.damage.isHidden():
            self._fit_height()  # the wrapped warning's height depends on the width

    @Slot()
    def _refresh_overflow(self, *_: object) -> None:
        """Say "stack overflow" once the crashing thread's walk is over and gives evidence of one."""
        doc = self.session.document
        crashing = doc.crashing_thread if doc is not None else None
        reason = doc.overflow_reason(crashing.index) if doc is not None and crashing is not None else None
        shown = not self.overflow.isHidden()
        self.overflow.setText(f"Stack overflow: {reason}" if reason else "")
        self.overflow.setVisible(reason is not None)
        if shown != (reason is not None):
            self._fit_height()

    @Slot()
    def _refresh_symbols(self, *_: object) -> None:
        doc = self.session.document
        if doc is None:
            return
        self._set("symbols", self._symbols_text(doc))

    def _symbols_text(self, doc: Document) -> str:
        """How many of the modules the walk used (frames, scanned words) lack symbols."""
        total = len(doc.state.modules)
        if total == 0:
            if "module list" in dump_damage(doc.state).damaged_streams:
                return "unknown: the module list is damaged"
            return "no modules listed in the dump"
        used = doc.modules_used
        lacking = doc.modules_lacking_symbols()
        theme = self._theme
        parts = []
        running = doc.status is AnalysisStatus.RUNNING
        if running:
            parts.append(f"walking… {len(used)} of {total} modules on the stacks so far")
        add = f'<a href="{_LINK_ADD_SYMBOLS}">Add a symbol folder…</a>'
        if lacking:
            names = ", ".join(doc.state.modules[i].module.filename for i in lacking)
            verb = "lacks" if len(lacking) == 1 else "lack"
            # the most common first-use mistake gets said where it shows, with the way out
            why = "" if doc.state.symbols_searched else "no symbol paths are set: "
            parts.append(
                f'<a href="{_LINK_MISSING}" title="{_e(names)}" style="color: {theme.crash.name()};">'
                f"{why}{len(lacking)} of {len(used)} modules with frames or scan hits {verb} symbols</a>"
            )
            parts.append(add)
        elif not doc.state.symbols_searched:
            parts.append(f'<span style="color: {theme.crash.name()};">no symbol paths are set</span>')
            parts.append(add)
        elif used and not running:
            parts.append(
                f'<span style="color: {theme.ok.name()};">all {len(used)} modules with frames or scan hits '
                "have symbols</span>"
            )
        elif doc.walk_error is not None:
            parts.append("not walked (see Problems)")
        if doc.status is AnalysisStatus.CANCELLED:
            parts.append("(walk cancelled)")
        return " · ".join(parts) if parts else f"{total} modules"

    @Slot(str)
    def _on_link(self, link: str) -> None:
        if link.startswith(_LINK_THREAD):
            self.session.select_thread(int(link[len(_LINK_THREAD) :]))
        elif link == _LINK_MISSING:
            self.missing_symbols_requested.emit()
        elif link == _LINK_PROBLEMS:
            self.problems_requested.emit()
        elif link == _LINK_ADD_SYMBOLS:
            self.add_symbols_requested.emit()


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _plain(rich: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", rich))
