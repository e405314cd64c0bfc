"""Source pane: the selected frame's source line in its file, with the lines of its inline frames marked.

A physical frame and the frames inlined at its instruction share one instruction: the frame's
own line is where it calls the outermost inlined function, each inline frame's line is where
it calls the next (the innermost's is where the instruction is). The selected one is marked
and scrolled to; the others in the same file are marked too. The file is found on this
machine as the symbol file records it, or under a source-root mapping of Preferences; when
it is not, the pane lists every path it tried. Reading and highlighting (Pygments) happen on
the pane's background thread and read at most a window of lines around the line.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtGui import (
    QColor,
    QFont,
    QResizeEvent,
    QShowEvent,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSizePolicy, QTextEdit, QWidget

from inspector.core.explain.triage import report_number
from inspector.core.minidump import basename
from inspector.gui.background import BackgroundCalls
from inspector.gui.panes.frame_follower import FrameFollower
from inspector.gui.session import FrameRef, Session
from inspector.gui.source_text import SourceExcerpt, Span, read_excerpt
from inspector.gui.theme import Theme

#: width of the line-number gutter written before each line (`  70 │ `)
_GUTTER = 8


class _Highlighter(QSyntaxHighlighter):
    """Applies the spans the background thread computed, line by line (Qt asks per text block)."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self.spans: tuple[tuple[Span, ...], ...] = ()
        self.gutter = QTextCharFormat()

    def highlightBlock(self, text: str) -> None:
        self.setFormat(0, min(_GUTTER, len(text)), self.gutter)
        number = self.currentBlock().blockNumber()
        if not 0 <= number < len(self.spans):
            return
        for span in self.spans[number]:
            look = QTextCharFormat()
            if span.color:
                look.setForeground(QColor(span.color))
            if span.bold:
                look.setFontWeight(QFont.Weight.Bold)
            look.setFontItalic(span.italic)
            self.setFormat(_GUTTER + span.column, span.length, look)


class SourcePane(FrameFollower):
    def __init__(self, session: Session, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(session, parent, object_name="sourcePane")
        self._theme = theme
        self.background = BackgroundCalls(self)
        self.excerpt: SourceExcerpt | None = None
        #: (line, what is there) of every location of the frame in the shown file; the selected first
        self.marks: list[tuple[int, str]] = []
        self._request: tuple[str, int, tuple[tuple[int, str], ...]] | None = None

        self.title = QLabel("No frame selected", self)
        self.title.setObjectName("sourceTitle")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("sourceText")
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(theme.mono)
        self.highlighter = _Highlighter(self.text.document())
        self.highlighter.gutter.setForeground(theme.muted)
        self.setFocusProxy(self.text)
        self._stack(self.title, self.text)

        session.document_changed.connect(self._on_document_changed)
        session.source_roots_changed.connect(self._reload)

    def set_theme(self, theme: Theme) -> None:
        dark_changed = theme.dark != self._theme.dark
        self._theme = theme
        self.text.setFont(theme.mono)
        self.highlighter.gutter.setForeground(theme.muted)
        if dark_changed:
            self._reload()
        else:
            self._mark_lines()

    # ---- following the session ----

    @Slot()
    def _on_document_changed(self) -> None:
        self._request = None
        self._show_message("No frame selected")

    @property
    def showing(self) -> bool:
        return self._request is not None

    def show_frame(self, ref: FrameRef | None) -> None:
        doc = self.session.document
        frames = doc.frames(ref.thread) if doc is not None and ref is not None else []
        if ref is None or not 0 <= ref.frame < len(frames):
            self._request = None
            self._show_message("No frame selected")
            return
        frame = frames[ref.frame]
        # every location of the physical frame: (file, line, function), depth 0 = the frame itself
        locations = [(frame.source_file, frame.source_line, frame.function_name or "?")]
        locations += [(i.file, i.line, i.function) for i in frame.inlines]
        depth = ref.inline if 0 <= ref.inline < len(locations) else 0
        file, line, function = locations[depth]
        if file is None or not line:
            self._request = None
            why = "no symbols" if frame.function_name is None else "no source line in its symbols"
            self._show_message(f"Frame {report_number(frames, ref.frame, depth)}: {why}")
            return
        marks = [(line, f"{function} (selected)")]
        marks += [(ln, f) for i, (fl, ln, f) in enumerate(locations) if i != depth and fl == file and ln]
        request = (file, line, tuple(marks))
        if request == self._request:
            return
        self._request = request
        self._load()

    @Slot()
    def _reload(self) -> None:
        if self._request is not None:
            self._load()

    def _load(self) -> None:
        assert self._request is not None
        file, line, marks = self._request
        roots = self.session.source_roots
        dark = self._theme.dark
        self.title.setText(f"{basename(file)} : {line} — reading…")
        self.background.submit(
            lambda: read_excerpt(file, line, roots, dark=dark),
            self._on_excerpt,
            list(marks),
        )

    def _on_excerpt(self, excerpt: object, error: Exception | None, marks: list[tuple[int, str]]) -> None:
        if error is not None or not isinstance(excerpt, SourceExcerpt):
            self._show_message(f"The source could not be read ({error})")
            return
        self.excerpt = excerpt
        self.marks = marks
        if excerpt.path is None or excerpt.message is not None:
            where = excerpt.path or excerpt.recorded
            text = f"{where} : {excerpt.line} — {excerpt.message}."
            if excerpt.path is None:
                text += (
                    " Tried: " + ", ".join(excerpt.tried) + ". Map the recorded folder to where the "
                    "sources are on this machine in File › Preferences › Source folders."
                )
            self._show_message(text)
            return
        inline = len(marks) - 1
        extra = f"; {inline} inline location{'s' * (inline != 1)} marked" if inline else ""
        self.title.setText(f"{excerpt.path} : {excerpt.line}{extra}")
        width = _GUTTER - 3
        self.highlighter.spans = excerpt.spans
        self.text.setPlainText(
            "\n".join(
                f"{n:>{width}} │ {text}" for n, text in enumerate(excerpt.lines, start=excerpt.first_line)
            )
        )
        self._mark_lines()

    def _mark_lines(self) -> None:
        excerpt = self.excerpt
        if excerpt is None or excerpt.path is None or not excerpt.lines:
            self.text.setExtraSelections([])
            return
        selections = []
        for i, (line, _what) in enumerate(self.marks):
            block = self.text.document().findBlockByNumber(line - excerpt.first_line)
            if not block.isValid():
                continue
            selection = QTextEdit.ExtraSelection()
            selection.cursor = QTextCursor(block)
            look = QTextCharFormat()
            look.setBackground(self._theme.focus_row if i == 0 else self._theme.saved_row)
            look.setProperty(QTextCharFormat.Property.FullWidthSelection, True)
            selection.format = look
            selections.append(selection)
        self.text.setExtraSelections(selections)
        first = self.text.document().findBlockByNumber(excerpt.line - excerpt.first_line)
        if first.isValid():
            self.text.setTextCursor(QTextCursor(first))
            self._center()

    def _center(self) -> None:
        """The selected line in the middle (again when shown or resized: a hidden tab has no height)."""
        if self.excerpt is not None and self.excerpt.lines:
            self.text.centerCursor()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        QTimer.singleShot(0, self._center)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._center()

    def marked_lines(self) -> list[int]:
        """The line numbers marked (the selected one first)."""
        return [line for line, _ in self.marks] if self.excerpt is not None and self.excerpt.lines else []

    def _show_message(self, text: str) -> None:
        self.excerpt = None
        self.marks = []
        self.highlighter.spans = ()
        self.text.setPlainText("")
        self.text.setExtraSelections([])
        self.title.setText(text)
