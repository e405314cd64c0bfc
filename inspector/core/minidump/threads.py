"""ThreadList, ThreadNames and ThreadInfoList."""

from __future__ import annotations

from types import MappingProxyType

from inspector.core.minidump.context import CpuContext
from inspector.core.minidump.errors import BadData, BadRva
from inspector.core.minidump.format import Location
from inspector.core.minidump.memory import MemoryRegion
from inspector.core.minidump.reader import (
    ContextCache,
    StreamContext,
    outside_problem,
    read_ex_list_header,
    read_list_header,
    read_stream_context,
)
from inspector.core.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from inspector.core.minidump.reader import ContextReader

THREAD_SIZE = 48
#: offset of the context's (size, rva) descriptor in a MINIDUMP_THREAD
THREAD_CONTEXT_OFFSET = 40
THREAD_NAME_SIZE = 12
THREAD_INFO_SIZE = 64


class Thread(Record):
    """One MINIDUMP_THREAD with its stack bytes and register context.

    `stack` is None when the descriptor's RVA is 0 / size 0 / outside the file;
    `Minidump.stack_region_for` then looks the stack up in the memory list, as
    rust-minidump does. `context` is the thread's own context (for the crashing
    thread the exception context is usually more useful: `Minidump.thread_context`).
    """

    index: int
    thread_id: int
    suspend_count: int
    priority_class: int
    priority: int
    teb: int
    stack_start: int
    stack_location: Location
    context_location: Location
    stack: MemoryRegion | None
    context: CpuContext | None


class ThreadList(Record):
    threads: tuple[Thread, ...]

    def __len__(self) -> int:
        return len(self.threads)

    def __iter__(self) -> Iterator[Thread]:
        return iter(self.threads)

    def __getitem__(self, index: int) -> Thread:
        return self.threads[index]

    def by_id(self, thread_id: int) -> Thread | None:
        """The thread with this id (the last one if the id repeats, as rust-minidump)."""
        found = None
        for thread in self.threads:
            if thread.thread_id == thread_id:
                found = thread
        return found


class ThreadName(Record):
    thread_id: int
    name_rva: int
    name: str | None


class ThreadNames(Record):
    """Thread names; `names` maps thread id -> name (a later entry for the same id wins)."""

    entries: tuple[ThreadName, ...]
    names: Mapping[int, str]

    def get(self, thread_id: int) -> str | None:
        return self.names.get(thread_id)


class ThreadInfo(Record):
    thread_id: int
    dump_flags: int
    dump_error: int
    exit_status: int
    create_time: int
    exit_time: int
    kernel_time: int
    user_time: int
    start_address: int
    affinity: int


class ThreadInfoList(Record):
    entries: tuple[ThreadInfo, ...]

    def get(self, thread_id: int) -> ThreadInfo | None:
        found = None
        for info in self.entries:
            if info.thread_id == thread_id:
                found = info
        return found


def read_memory_region(ctx: StreamContext, start: int, location: Location) -> MemoryRegion | None:
    """The bytes of a MINIDUMP_MEMORY_DESCRIPTOR, or None (RVA/size 0, or starting outside the file).

    A region running past the end of the file (a dump cut short, or a damaged size) keeps the
    bytes that are in the file, so a truncated dump still shows, and walks, the start of the
    stack; the caller reports the damage.
    """
    if location.rva == 0 or location.data_size == 0:
        return None
    present = min(location.data_size, ctx.source.size - location.rva)
    if present <= 0:
        return None
    view = ctx.source.data[location.rva : location.rva + present]
    return MemoryRegion(start, present, view, location.rva, ctx.source.endian)


def parse_thread_list(ctx: StreamContext, read_context: ContextReader | None) -> ThreadList:
    source = ctx.source
    first, count = read_list_header(ctx, THREAD_SIZE, "thread list")
    record = source.struct("IIIIQQIIII")
    threads = []
    # threads naming one context location share its read (an immutable context, or its error)
    contexts: ContextCache = {}
    for i in range(count):
        offset = first + i * THREAD_SIZE
        tid, suspend, prio_class, prio, teb, stack_start, stack_size, stack_rva, ctx_size, ctx_rva = (
            record.unpack_from(source.data, offset)
        )
        stack_loc = Location(stack_size, stack_rva)
        ctx_loc = Location(ctx_size, ctx_rva)
        stack = read_memory_region(ctx, stack_start, stack_loc)
        if stack_size and stack_rva and not source.has(stack_rva, stack_size):  # (the message only then)
            what = f"thread[{i}] (id {tid:#x}) stack"
            ctx.report(outside_problem(source, stack_rva, stack_size, what, offset), rejects=False)
        context = None
        if read_context is not None:
            what = f"thread[{i}] (id {tid:#x}) context"
            context = read_stream_context(ctx, read_context, ctx_loc, what=what, at=offset, cache=contexts)
        threads.append(
            Thread(i, tid, suspend, prio_class, prio, teb, stack_start, stack_loc, ctx_loc, stack, context)
        )
    return ThreadList(tuple(threads))


def parse_thread_names(ctx: StreamContext) -> ThreadNames:
    source = ctx.source
    first, count = read_list_header(ctx, THREAD_NAME_SIZE, "thread name list")
    record = source.struct("IQ")
    entries = []
    names: dict[int, str] = {}
    for i in range(count):
        tid, rva = record.unpack_from(source.data, first + i * THREAD_NAME_SIZE)
        name: str | None
        try:
            name = source.utf16_string(rva)
        except (BadRva, BadData) as exc:
            ctx.report(type(exc)(f"name of thread {tid:#x}: {exc.message}", offset=exc.offset), rejects=False)
            name = None
        else:
            names[tid] = name
        entries.append(ThreadName(tid, rva, name))
    return ThreadNames(tuple(entries), MappingProxyType(names))


def parse_thread_info_list(ctx: StreamContext) -> ThreadInfoList:
    source = ctx.source
    first, stride, count = read_ex_list_header(ctx, THREAD_INFO_SIZE, "thread info list")
    record = source.struct("IIIIQQQQQQ")
    entries = [ThreadInfo(*record.unpack_from(source.data, first + i * stride)) for i in range(count)]
    return ThreadInfoList(tuple(entries))
