"""Which modules a walk will likely need, before it starts: their symbols are downloaded ahead."""

from __future__ import annotations

from inspector.core.minidump import Minidump, Module
from inspector.core.process.state import ThreadStart


def modules_pointed_at(
    dump: Minidump, order: list[int], starts: list[ThreadStart], stack_bytes: int = 64 * 1024
) -> list[Module]:
    """Modules a walk is likely to need, most urgent first: for each thread (crashing first)
    the module of its instruction pointer, of its other registers, then of the words on its
    stack from the stack pointer up (the return addresses CFI, frame pointers and scans read).
    """
    modules = dump.modules
    out: list[Module] = []
    seen: set[int] = set()
    looked: set[int] = set()
    # A hostile dump may point thousands of threads at one long stack (as for shared walks):
    # each stack window is read once, and each value looked up once.
    scanned: set[tuple[int, int, int]] = set()

    def add(value: int) -> None:
        if value in looked:
            return
        looked.add(value)
        index = modules.index_at(value)
        if index is not None and index not in seen:
            seen.add(index)
            out.append(modules[index])

    width = 4 if dump.cpu.pointer_width == 4 else 8
    for thread_index in order:
        context, region = starts[thread_index].context, starts[thread_index].stack
        if context is None:
            continue
        ip = context.instruction_pointer
        if ip is not None:
            add(ip)
        for _, value in context.valid_registers():
            add(value)
        sp = context.stack_pointer
        if sp is None or region is None or not region.contains(sp):
            continue
        start = sp - region.base
        start -= start % width
        window = (region.base, region.rva, start)
        if window in scanned:
            continue
        scanned.add(window)
        data = region.data[start : start + stack_bytes]
        data = data[: len(data) - len(data) % width]
        words = data.cast("I" if width == 4 else "Q") if region.endian == "<" else ()
        for value in dict.fromkeys(words):
            add(value)
    return out
