"""Following a pointer on double-click (a register's value, a stack word): one rule for every pane.

A value inside a module (a return address, a function or vtable pointer) selects
that module: its code bytes as hex words say little, the module's row says whose
code it is and whether its symbols loaded. Any other value the dump captured
memory for is shown in the memory pane.
"""

from __future__ import annotations

from inspector.gui.document import Document
from inspector.gui.lookups import PointerKind, address_text, describe_pointer
from inspector.gui.session import Session


def module_sentence(doc: Document, value: int) -> str | None:
    """`0x… is in libc.so.6 + 0x…` when `value` points into a module (None otherwise)."""
    target = describe_pointer(doc, value)
    if target is not None and target.kind is PointerKind.MODULE and target.module_index is not None:
        return f"{address_text(doc.state, value)} is in {target.text}"
    return None


def follow_pointer(session: Session, value: int) -> str | None:
    """Show what `value` points at, module first; returns a sentence for the status bar when a module
    was selected (the jump is to another pane), else None (memory shown, or nothing to follow)."""
    doc = session.document
    if doc is None:
        return None
    target = describe_pointer(doc, value)
    if target is not None and target.kind is PointerKind.MODULE and target.module_index is not None:
        session.select_module(target.module_index)
        return module_sentence(doc, value)
    if doc.state.memory.region_for(value) is not None:
        session.show_address(value)
    return None
