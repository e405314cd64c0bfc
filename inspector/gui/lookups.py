"""What an address or a word means, for the panes: the module or thread stack it points into.

View helpers over the core's `ProcessState` (no Qt): the memory pane's notes, the registers'
"Points to" column and the links between panes use them.
"""

from __future__ import annotations

import datetime
import enum
from dataclasses import dataclass

from inspector.core.process import ProcessState
from inspector.core.types import format_address
from inspector.gui.document import Document


class PointerKind(enum.Enum):
    MODULE = "module"
    STACK = "stack"


@dataclass(frozen=True, slots=True)
class PointerTarget:
    """What a word that looks like a pointer points into."""

    kind: PointerKind
    text: str
    module_index: int | None = None
    thread_index: int | None = None


def address_text(state: ProcessState, value: int) -> str:
    """`0x…` padded to the dump's pointer width."""
    return format_address(value, state.pointer_width)


def describe_code_address(state: ProcessState, address: int) -> str:
    """`libc.so.6 + 0x85f16`, or the bare address when no module holds it."""
    module = state.module_list.module_at(address)
    if module is None:
        return address_text(state, address)
    return f"{module.filename} + {address - module.base:#x}"


def describe_pointer(document: Document, value: int) -> PointerTarget | None:
    """What `value` points into if it is an address in a module or in a thread's stack."""
    if value < 0x1000:
        return None
    modules = document.state.module_list
    index = modules.index_at(value)
    if index is not None:
        module = modules[index]
        return PointerTarget(
            PointerKind.MODULE, f"{module.filename} + {value - module.base:#x}", module_index=index
        )
    thread = document.thread_with_stack_at(value)
    if thread is not None:
        return PointerTarget(PointerKind.STACK, f"stack of {thread.label}", thread_index=thread.index)
    return None


def dump_time_text(state: ProcessState) -> str | None:
    """When the dump was written, `2024-05-01 12:00:00 UTC`; None when the dump does not say."""
    stamp = state.dump_time
    if not stamp:
        return None
    try:
        when = datetime.datetime.fromtimestamp(stamp, tz=datetime.UTC)
    except (OverflowError, OSError, ValueError):
        return f"{stamp:#x} (not a valid time)"
    return when.strftime("%Y-%m-%d %H:%M:%S UTC")
