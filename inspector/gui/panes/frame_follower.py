"""`FrameFollower`: a pane that shows something about the selected frame (Disassembly, Source).

It follows the session's frame selection, and shows the selected frame once its thread's
first frames arrive (a thread is selected before its walk reaches it). Subclasses say what
they show in `show_frame` and whether they show anything yet in `showing`.
"""

from __future__ import annotations

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QWidget

from inspector.gui.panes.linked_pane import LinkedPane
from inspector.gui.session import FrameRef, Session


class FrameFollower(LinkedPane):
    def __init__(self, session: Session, parent: QWidget | None, *, object_name: str) -> None:
        super().__init__(session, parent, object_name=object_name)
        session.frame_selected.connect(self._on_frame_selected)
        session.frames_added.connect(self._on_frames_added)

    @property
    def showing(self) -> bool:
        raise NotImplementedError

    def show_frame(self, ref: FrameRef | None) -> None:
        raise NotImplementedError

    @Slot(int, int, int)
    def _on_frames_added(self, thread: int, first: int, count: int) -> None:
        ref = self.session.selected_frame
        if ref is not None and not self.showing and ref.thread == thread:
            self.show_frame(ref)

    @Slot(object)
    def _on_frame_selected(self, ref: object) -> None:
        self.show_frame(ref if isinstance(ref, FrameRef) else None)
