"""Searching all frames of all threads (no Qt): what a frame is found by, and which frames match.

A frame matches when the text (case-insensitive) is in its function's name, an inlined
function's, its module's file name, its source file or an inlined frame's, or its report label
(`libc.so.6 + 0x85f16` for a frame without symbols, so module offsets can be searched too).
"""

from __future__ import annotations

from collections.abc import Iterator

from inspector.core.report.frame_text import frame_label
from inspector.core.unwind import StackFrame
from inspector.gui.document import Document


def frame_texts(frame: StackFrame) -> Iterator[str]:
    yield frame_label(frame)
    if frame.function_name:
        yield frame.function_name
    if frame.module is not None:
        yield frame.module.code_file
    if frame.source_file:
        yield frame.source_file if frame.source_line is None else f"{frame.source_file}:{frame.source_line}"
    for inline in frame.inlines:
        yield inline.function
        if inline.file:
            yield inline.file if inline.line is None else f"{inline.file}:{inline.line}"


def frame_matches(frame: StackFrame, needle: str) -> bool:
    """`needle` must be lower-case already (it is compared with every frame of every thread)."""
    return any(needle in text.lower() for text in frame_texts(frame))


def matching_frames(document: Document, thread_index: int, text: str) -> list[int]:
    """The indexes of the thread's frames (walked so far) that match `text`."""
    needle = text.strip().lower()
    if not needle:
        return []
    return [i for i, frame in enumerate(document.frames(thread_index)) if frame_matches(frame, needle)]
