"""What the processor concludes from a dump's streams, beyond reading them.

The CPU and OS (the CPU guessed from the thread contexts' flags when the system info is
unreadable), the crashing thread (rust-minidump's rule), each thread's starting context
(the exception's for the crashing thread) and the stack memory its walk reads, the
last-error value through the TEB, the crash reason and address, and the process facts of
the JSON report. `Minidump` has these as properties; they live here, apart from the reader.
"""

from __future__ import annotations

import _thread

from inspector.core.minidump import context as context_mod
from inspector.core.minidump.context import CpuContext
from inspector.core.minidump.errors import BadData, DumpClosed, StreamProblem
from inspector.core.minidump.exception import EXCEPTION_CONTEXT_OFFSET, crash_address, crash_reason
from inspector.core.minidump.format import StreamType
from inspector.core.minidump.memory import MemoryRegion, MemoryView
from inspector.core.minidump.modules import ModuleList, UnloadedModuleList
from inspector.core.minidump.threads import THREAD_CONTEXT_OFFSET, THREAD_SIZE, Thread
from inspector.core.types import Cpu, Os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from inspector.core.minidump.exception import ExceptionStream
    from inspector.core.minidump.format import DirectoryEntry, Header
    from inspector.core.minidump.linux import LinuxCpuInfo, LinuxLsbRelease, LinuxMaps, LinuxProcStatus
    from inspector.core.minidump.memory_lists import MemoryList
    from inspector.core.minidump.reader import ByteSource
    from inspector.core.minidump.system import BreakpadInfo, MiscInfo, SystemInfo
    from inspector.core.minidump.threads import ThreadList, ThreadNames


_UNSET = object()  # a fact not worked out yet
#: A dump without a (readable) module list has these (asked for by every thread's walk).
_NO_MODULES = ModuleList(())
_NO_UNLOADED_MODULES = UnloadedModuleList(())


class ProcessFacts:
    """The processor's view of a dump, as properties of `Minidump` (which provides the streams)."""

    if TYPE_CHECKING:  # what the reader (`Minidump`) provides
        path: str | None
        size: int
        endian: str
        header: Header
        source: ByteSource
        streams: dict[int, DirectoryEntry]
        _data: memoryview
        _lock: _thread.RLock
        _cache: dict[str, object]
        _problems: list[StreamProblem]
        _closed: bool

        @property
        def system_info(self) -> SystemInfo | None: ...
        @property
        def misc_info(self) -> MiscInfo | None: ...
        @property
        def thread_list(self) -> ThreadList | None: ...
        @property
        def thread_names(self) -> ThreadNames | None: ...
        @property
        def module_list(self) -> ModuleList | None: ...
        @property
        def unloaded_module_list(self) -> UnloadedModuleList | None: ...
        @property
        def memory_list(self) -> MemoryList | None: ...
        @property
        def memory64_list(self) -> MemoryList | None: ...
        @property
        def exception(self) -> ExceptionStream | None: ...
        @property
        def breakpad_info(self) -> BreakpadInfo | None: ...
        @property
        def linux_cpu_info(self) -> LinuxCpuInfo | None: ...
        @property
        def linux_proc_status(self) -> LinuxProcStatus | None: ...
        @property
        def linux_lsb_release(self) -> LinuxLsbRelease | None: ...
        @property
        def linux_maps(self) -> LinuxMaps | None: ...

    @property
    def os(self) -> Os:
        info = self.system_info
        return info.os if info else Os.UNKNOWN

    @property
    def cpu(self) -> Cpu:
        info = self.system_info
        if info is not None:
            return info.cpu
        guess = self.guessed_architecture
        return Cpu.UNKNOWN if guess is None else context_mod.cpu_of_architecture(guess)

    @property
    def guessed_architecture(self) -> int | None:
        """Without a readable SystemInfo stream: the processor architecture the thread contexts name.

        rust-minidump refuses such a dump. The contexts' `context_flags` carry CPU bits (and
        each layout has its size): the architecture most of the first 16 thread contexts (and
        the exception's) agree on is used, with a problem saying so. None when none matches.
        """
        with self._lock:
            if "guessed_architecture" in self._cache:
                guess = self._cache["guessed_architecture"]
                return guess if isinstance(guess, int) else None
            votes: dict[int, int] = {}
            for rva, size in self._raw_context_locations():
                data = self._data[rva : rva + min(size, self.size - rva)]
                architecture = context_mod.architecture_of_context(data, self.endian)
                if architecture is not None:
                    votes[architecture] = votes.get(architecture, 0) + 1
            guess = max(votes, key=lambda a: votes[a]) if votes else None
            self._cache["guessed_architecture"] = guess
            if guess is not None:
                cpu = context_mod.cpu_of_architecture(guess)
                self._problems.append(
                    StreamProblem(
                        StreamType.SystemInfoStream,
                        0,
                        f"no readable system info: the CPU ({cpu.value}) is taken from the flags of "
                        f"{votes[guess]} thread context(s), the OS is unknown",
                        BadData.code,
                        rejects_stream=False,
                    )
                )
            return guess

    def _raw_context_locations(self) -> list[tuple[int, int]]:
        """(rva, size) of the first thread contexts and the exception's, read from the raw streams."""
        out = []
        unpack = self.source.struct("II").unpack_from
        threads = self.streams.get(StreamType.ThreadListStream)
        if threads is not None and self.source.has(threads.rva, 4):
            claimed = self.source.u32(threads.rva)
            # the padding test needs the claimed count: the capped one misplaces every
            # entry of a padded list of more than 16 threads by the 4 bytes of padding
            first = threads.rva + (8 if threads.data_size == 8 + THREAD_SIZE * claimed else 4)
            for i in range(min(claimed, 16)):
                at = first + THREAD_SIZE * i + THREAD_CONTEXT_OFFSET
                if self.source.has(at, 8):
                    size, rva = unpack(self._data, at)
                    if size and rva < self.size:
                        out.append((rva, size))
        exception = self.streams.get(StreamType.ExceptionStream)
        if exception is not None and self.source.has(exception.rva + EXCEPTION_CONTEXT_OFFSET, 8):
            size, rva = unpack(self._data, exception.rva + EXCEPTION_CONTEXT_OFFSET)
            if size and rva < self.size:
                out.append((rva, size))
        return out

    @property
    def pointer_width(self) -> int:
        """4 or 8: the CPU's pointer size (8 when the CPU is unknown)."""
        cpu = self.cpu
        return 8 if cpu is Cpu.UNKNOWN else cpu.pointer_width

    @property
    def threads(self) -> tuple[Thread, ...]:
        threads = self.thread_list
        return threads.threads if threads else ()

    @property
    def modules(self) -> ModuleList:
        """Loaded modules (empty when the dump has no readable module list)."""
        modules = self.module_list
        return modules if modules is not None else _NO_MODULES

    @property
    def unloaded_modules(self) -> UnloadedModuleList:
        modules = self.unloaded_module_list
        return modules if modules is not None else _NO_UNLOADED_MODULES

    @property
    def memory(self) -> MemoryView:
        """All captured memory: Memory64List and MemoryList regions (overlaps dropped as rust-minidump)."""
        view = self._cache.get("memory")  # built already: no lock (see `Minidump._stream`)
        if isinstance(view, MemoryView):
            return view
        with self._lock:
            if self._closed:
                raise DumpClosed(f"{self!r} is closed")
            view = self._cache.get("memory")
            if view is None:
                regions: list[MemoryRegion] = []
                for lst in (self.memory64_list, self.memory_list):
                    if lst is not None:
                        regions.extend(lst.regions)
                view = MemoryView(regions)
                self._cache["memory"] = view
            assert isinstance(view, MemoryView)
            return view

    def last_error_value(self, thread: Thread) -> int | None:
        """The thread's Win32 last-error value, read as rust-minidump does (None if not captured).

        rust-minidump reads the u32 at TEB + 13 pointers (`LastErrorValue` in the
        TEB) from the captured memory, on every OS; name it with
        `windows_error_name` for the JSON `last_error_value`.
        """
        if self.cpu is Cpu.UNKNOWN:
            return None
        return self.memory.read_u32(thread.teb + 13 * self.pointer_width)

    def thread_name(self, thread: Thread) -> str | None:
        names = self.thread_names
        return names.get(thread.thread_id) if names else None

    @property
    def dump_thread_id(self) -> int | None:
        """The thread that wrote the dump (Breakpad), which rust-minidump does not walk."""
        info = self.breakpad_info
        return info.dump_thread_id if info else None

    @property
    def requesting_thread_id(self) -> int | None:
        """The exception's thread id, else the Breakpad requesting thread id."""
        exception = self.exception
        if exception is not None:
            return exception.thread_id
        info = self.breakpad_info
        return info.requesting_thread_id if info else None

    @property
    def crashing_thread_index(self) -> int | None:
        """Index in the thread list of the crashing / requesting thread (JSON `crash_info.crashing_thread`).

        rust-minidump's rule: the (last) thread whose id is the requesting
        thread id, not counting the Breakpad dump-writing thread.
        """
        # cached: `thread_context` asks once per thread, and a scan per call is quadratic
        index = self._cache.get("crashing_thread_index", _UNSET)  # no lock (see `Minidump._stream`)
        if index is not _UNSET:
            return index if isinstance(index, int) else None
        with self._lock:
            if "crashing_thread_index" in self._cache:
                index = self._cache["crashing_thread_index"]
                return index if isinstance(index, int) else None
            found = None
            wanted = self.requesting_thread_id
            if wanted is not None:
                skip = self.dump_thread_id
                for i, thread in enumerate(self.threads):
                    if thread.thread_id == skip:
                        continue
                    if thread.thread_id == wanted:
                        found = i
            self._cache["crashing_thread_index"] = found
            return found

    @property
    def crashing_thread(self) -> Thread | None:
        index = self.crashing_thread_index
        return None if index is None else self.threads[index]

    def thread_context(self, thread: Thread) -> CpuContext | None:
        """The context a walk of `thread` starts from: the exception context for the crashing thread."""
        if thread.index == self.crashing_thread_index:
            exception = self.exception
            if exception is not None and exception.context is not None:
                return exception.context
        return thread.context

    def stack_region_for(self, thread: Thread, context: CpuContext | None = None) -> MemoryRegion | None:
        """The stack memory a walk of `thread` reads, chosen as rust-minidump does.

        The thread's own stack bytes (or, if its descriptor has no bytes, the
        memory-list region at the stack start); but if the starting context's
        stack pointer is not inside that region, the memory-list region that
        holds the stack pointer is used instead (the exception context of a
        crash on an alternate signal stack, for instance).
        """
        stack = thread.stack if thread.stack is not None else self.memory.region_for(thread.stack_start)
        ctx = context if context is not None else self.thread_context(thread)
        if ctx is not None:
            sp = ctx.value(ctx.register_set.stack_pointer)
            if stack is None or stack.read_u64(sp) is None:
                stack = self.memory.region_for(sp) or stack
        return stack

    # -- crash --

    @property
    def crash_reason(self) -> str | None:
        """JSON `crash_info.type`, None when there is no exception stream."""
        exception = self.exception
        return None if exception is None else crash_reason(exception, self.os, self.cpu)

    @property
    def crash_address(self) -> int | None:
        """JSON `crash_info.address` (as an integer), None without an exception stream."""
        exception = self.exception
        return None if exception is None else crash_address(exception, self.os, self.cpu)

    # -- process --

    @property
    def process_id(self) -> int | None:
        """JSON `pid`: MiscInfo's process id if the dump has MiscInfo, else /proc/self/status's Pid."""
        misc = self.misc_info
        if misc is not None:
            return misc.process_id
        status = self.linux_proc_status
        return status.pid if status is not None else None

    @property
    def process_create_time(self) -> int | None:
        misc = self.misc_info
        return misc.process_create_time if misc is not None else None

    @property
    def process_uptime(self) -> int | None:
        """Seconds between process creation and the dump (rust-minidump's `process_uptime`)."""
        misc = self.misc_info
        return misc.process_uptime(self.header.time_date_stamp) if misc is not None else None

    @property
    def linux_memory_map_count(self) -> int | None:
        maps = self.linux_maps
        return maps.mapping_count if maps is not None else None

    @property
    def cpu_microcode_version(self) -> int | None:
        info = self.linux_cpu_info
        return info.microcode_version if info is not None else None

    @property
    def lsb_release(self) -> dict[str, str] | None:
        lsb = self.linux_lsb_release
        return lsb.fields() if lsb is not None else None
