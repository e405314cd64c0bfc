"""`Minidump`: open a dump (read, or mapped when large), read header and directory, parse streams lazily.

Opening reads the file (a large one is memory-mapped), then only the 32-byte header and the
directory. Each stream is parsed on first access and cached; damage inside a stream is recorded
in `problems` and whatever could be read is still returned. Memory regions are views into the
file's bytes, so a multi-gigabyte full dump is never read as a whole.
"""

from __future__ import annotations

import _thread
import mmap
import os
import struct
from types import TracebackType

from inspector.core.errors import MinidumpError
from inspector.core.logs import get_logger
from inspector.core.minidump import context as context_mod
from inspector.core.minidump.context import CpuContext
from inspector.core.minidump.errors import (
    BadData,
    BadRva,
    DirectoryTruncated,
    DumpClosed,
    HeaderMismatch,
    NotAMinidump,
    StreamProblem,
    VersionMismatch,
)
from inspector.core.minidump.exception import (
    ExceptionStream,
    parse_exception,
)
from inspector.core.minidump.facts import ProcessFacts
from inspector.core.minidump.format import (
    DIRECTORY_ENTRY_SIZE,
    HEADER_SIZE,
    KNOWN_STREAM_TYPES,
    MINIDUMP_SIGNATURE,
    MINIDUMP_VERSION,
    RM_UNIMPLEMENTED_STREAMS,
    DirectoryEntry,
    Header,
    Location,
    StreamType,
)
from inspector.core.minidump.memory_lists import (
    MemoryInfoList,
    MemoryList,
    parse_memory64_list,
    parse_memory_info_list,
    parse_memory_list,
)
from inspector.core.minidump.modules import ModuleList, UnloadedModuleList, parse_module_list
from inspector.core.minidump.modules import parse_unloaded_module_list as _parse_unloaded
from inspector.core.minidump.reader import ByteSource, StreamContext, check_openable, file_bytes
from inspector.core.minidump.system import (
    AssertionInfo,
    BreakpadInfo,
    MiscInfo,
    SystemInfo,
    parse_assertion_info,
    parse_breakpad_info,
    parse_misc_info,
    parse_system_info,
)
from inspector.core.minidump.threads import (
    ThreadInfoList,
    ThreadList,
    ThreadNames,
    parse_thread_info_list,
    parse_thread_list,
    parse_thread_names,
)
from inspector.core.strict import strict
from inspector.core.types import path_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:  # imported when a dump has one of their streams (`_lacks`)
    from collections.abc import Callable, Iterator
    from typing import TypeVar

    from inspector.core.minidump import crashpad, handles, linux, mozilla

    T = TypeVar("T")

log = get_logger(__name__)

_UNPARSED = object()  # what `_stream` finds in the cache for a stream not parsed yet

#: Exceptions a parser may hit on hostile bytes that are not our own errors; turned into problems.
_PARSE_FAILURES = (struct.error, IndexError, ValueError, OverflowError, KeyError, UnicodeDecodeError)


def _describe_non_minidump(data: memoryview) -> str:
    # Only a file that is not a minidump needs its kind named.
    from inspector.core.minidump.file_kinds import describe_non_minidump

    return describe_non_minidump(bytes(data[:65536]))


class Minidump(ProcessFacts):
    """A minidump file. Use `Minidump.open(path)` or `Minidump.from_bytes(data)`; close it (or use `with`)."""

    def __init__(
        self, data: memoryview, *, path: str | None = None, mapping: mmap.mmap | None = None
    ) -> None:
        self.path = path
        self._mapping = mapping
        self._data = data
        self._lock = _thread.RLock()
        self._cache: dict[str, object] = {}
        self._problems: list[StreamProblem] = []
        self._closed = False
        self.size = len(data)
        self.endian, self.header = self._read_header(data)
        self.source = ByteSource(data, self.endian)
        # rust-minidump refuses a file whose signature or version is wrong. One of the two
        # intact, and a directory of real entries, say it is a damaged minidump: read it and
        # say so. Without a directory the header's damage is the error.
        header_problem: MinidumpError | None = None
        version = self.header.version & 0xFFFF
        if self.header.signature != MINIDUMP_SIGNATURE:
            header_problem = NotAMinidump(_describe_non_minidump(data))
            self._problems.append(
                StreamProblem(
                    None,
                    0,
                    f"signature {self.header.signature:#010x} is not MDMP, but the version and the "
                    "directory are a minidump's: read as one",
                    HeaderMismatch.code,
                )
            )
        elif version != MINIDUMP_VERSION:
            header_problem = VersionMismatch(
                f"minidump format version {version:#x}, expected {MINIDUMP_VERSION:#x}", offset=4
            )
            self._problems.append(
                StreamProblem(None, 4, f"{header_problem.message}; read as a minidump", header_problem.code)
            )
        try:
            self.directory = self._read_directory()
        except DirectoryTruncated:
            if header_problem is not None:
                raise header_problem from None
            raise
        if header_problem is not None and not self.directory:
            raise header_problem
        seen: dict[int, DirectoryEntry] = {}
        for entry in self.directory:
            old = seen.get(entry.stream_type)
            if old is not None and not (
                entry.stream_type == StreamType.UnusedStream and not old.data_size and not entry.data_size
            ):
                self._problems.append(
                    StreamProblem(
                        None,
                        self.header.stream_directory_rva + entry.index * DIRECTORY_ENTRY_SIZE,
                        f"stream type {entry.stream_type:#x} ({entry.name}) appears at indexes {old.index} "
                        f"and {entry.index}; using {entry.index}",
                        BadData.code,
                        rejects_stream=False,
                    )
                )
            seen[entry.stream_type] = entry
        #: stream type -> the entry used for it (the last one when a type repeats), sorted by type.
        self.streams: dict[int, DirectoryEntry] = dict(sorted(seen.items()))

    # ---- opening and closing ------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Minidump:
        """Read the file at `path` (a large one memory-mapped, read-only): its header and directory."""
        p = path_text(path)
        check_openable(p)
        return cls.from_file_bytes(p, *file_bytes(p))

    @classmethod
    def from_file_bytes(cls, path: str, data: memoryview, mapping: mmap.mmap | None) -> Minidump:
        """The dump of the file at `path` from its bytes as `reader.file_bytes` gives them (released
        on failure: the error names the file)."""
        log.debug("%s: %d bytes, %s", path, len(data), "read" if mapping is None else "mapped")
        try:
            return cls(data, path=path, mapping=mapping)
        except MinidumpError as exc:
            data.release()
            if mapping is not None:
                mapping.close()
            raise type(exc)(f"{path}: {exc.message}", offset=exc.offset) from None

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> Minidump:
        """A dump held in memory (tests, network input)."""
        view = data if isinstance(data, memoryview) else memoryview(data)
        return cls(view.cast("B") if view.format != "B" else view)

    def close(self) -> None:
        """Release the mapping. Regions handed out earlier keep it alive until they are dropped."""
        if self._closed:
            return
        self._closed = True
        self._cache.clear()
        mapping = self._mapping
        self._mapping = None
        if mapping is not None:
            try:
                self._data.release()
                mapping.close()
            except BufferError:
                log.debug("minidump mapping still in use; it closes when the last view is dropped")

    def __enter__(self) -> Minidump:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ---- header and directory -------------------------------------------------------------------

    @staticmethod
    def _read_header(data: memoryview) -> tuple[str, Header]:
        head = bytes(data[:4])
        if head == b"MDMP":
            endian = "<"
        elif head == b"PMDM":
            endian = ">"
        elif len(data) >= HEADER_SIZE and bytes(data[4:6]) == MINIDUMP_VERSION.to_bytes(2, "little"):
            endian = "<"  # a damaged signature before an intact version: checked by its directory
        else:
            raise NotAMinidump(_describe_non_minidump(data))
        if len(data) < HEADER_SIZE:
            raise HeaderMismatch(
                f"the file has {len(data)} bytes, too short for a minidump header ({HEADER_SIZE})", offset=0
            )
        return endian, Header(*struct.unpack_from(endian + "IIIIIIQ", data, 0))

    def _read_directory(self) -> tuple[DirectoryEntry, ...]:
        """The directory; a damaged header's directory is read as far as its entries make sense.

        A stream count that runs past the end of the file cannot be right: the entries are
        read only while they look like entries (a known stream type, bytes inside the file),
        since garbage read as entries would hide real streams of the same type. When the
        header's directory yields nothing (its offset or count damaged), the entries are
        looked for right after the header, where Breakpad and Crashpad write them.
        """
        rva = self.header.stream_directory_rva
        claimed = self.header.stream_count
        available = max(0, (self.size - rva) // DIRECTORY_ENTRY_SIZE) if rva < self.size else 0
        count = min(claimed, available)
        if count < claimed:
            entries = self._plausible_entries(rva, count)
            message = (
                f"directory of {claimed} entries at {rva:#x} runs past the end of the file; "
                f"{len(entries)} entries are readable"
            )
            if entries:
                self._problems.append(StreamProblem(None, rva, message, DirectoryTruncated.code))
                return entries
            return self._recover_directory(DirectoryTruncated(message, offset=rva), (HEADER_SIZE,))
        entry = self.source.struct("III")
        entries = tuple(
            DirectoryEntry(i, *entry.unpack_from(self._data, rva + i * DIRECTORY_ENTRY_SIZE))
            for i in range(count)
        )
        if not entries and claimed == 0:  # a count of 0: the entries may be there all the same
            return self._recover_directory(None, (rva, HEADER_SIZE))
        return entries

    def _plausible_entries(self, rva: int, limit: int, *, inside: bool = False) -> tuple[DirectoryEntry, ...]:
        """The leading entries at `rva` (at most `limit`) that look like directory entries.

        A known stream type other than UnusedStream (zeros end the entries) after the header;
        with `inside`, also bytes inside the file (a stream of a dump cut short may well lie
        past its end).
        """
        unpack = self.source.struct("III").unpack_from
        entries = []
        for i in range(limit):
            stream_type, size, at = unpack(self._data, rva + i * DIRECTORY_ENTRY_SIZE)
            if (
                stream_type == StreamType.UnusedStream
                or stream_type not in KNOWN_STREAM_TYPES
                or at < HEADER_SIZE
                or (inside and at + size > self.size)
            ):
                break
            entries.append(DirectoryEntry(i, stream_type, size, at))
        return tuple(entries)

    def _recover_directory(
        self, failure: DirectoryTruncated | None, places: tuple[int, ...]
    ) -> tuple[DirectoryEntry, ...]:
        """Entries that look real at the first of `places` that has any (its offset, or after the header)."""
        rva = self.header.stream_directory_rva
        for place in dict.fromkeys(places):
            if place < HEADER_SIZE or place >= self.size:
                continue
            limit = min((self.size - place) // DIRECTORY_ENTRY_SIZE, 4096)
            found = self._plausible_entries(place, limit, inside=True)
            if found:
                where = "right after the header" if place == HEADER_SIZE else f"at {place:#x}"
                self._problems.append(
                    StreamProblem(
                        None,
                        8 if failure is None else 12,  # the count said 0; or the offset or count is bad
                        f"the header's directory ({self.header.stream_count} entries at {rva:#x}) is "
                        f"unusable; {len(found)} entries found {where} are used",
                        DirectoryTruncated.code,
                    )
                )
                return found
        if failure is not None:
            raise failure
        return ()

    # ---- raw access ------------------------------------------------------------------------------

    @property
    def data(self) -> memoryview:
        """The whole file."""
        return self._data

    @property
    def problems(self) -> tuple[StreamProblem, ...]:
        """Damage found so far: directory problems, then those of every stream parsed yet (`parse_all`)."""
        with self._lock:
            return tuple(self._problems)

    def stream_problems(self, stream_type: int) -> list[StreamProblem]:
        """Problems recorded for one stream (parse it first, or call `parse_all`)."""
        with self._lock:
            return [p for p in self._problems if p.stream_type == stream_type]

    def strictly_rejected(self, stream_type: int) -> bool:
        """Whether rust-minidump would refuse this stream (damage it does not tolerate was found)."""
        return any(p.rejects_stream for p in self.stream_problems(stream_type))

    def entry(self, stream_type: int) -> DirectoryEntry | None:
        """The directory entry used for `stream_type` (the last one if it repeats, as rust-minidump)."""
        return self.streams.get(stream_type)

    def raw_stream(self, stream_type: int) -> memoryview | None:
        """The stream's bytes, None if absent or (partly) outside the file."""
        entry = self.streams.get(stream_type)
        if entry is None or not self.source.has(entry.rva, entry.data_size):
            return None
        return self._data[entry.rva : entry.rva + entry.data_size]

    def unknown_streams(self) -> list[DirectoryEntry]:
        """Streams of types this reader has no name for (listed with their vendor)."""
        return [e for e in self.streams.values() if not e.is_known]

    def unimplemented_streams(self) -> list[DirectoryEntry]:
        """Known stream types that rust-minidump does not interpret (reported as "unimplemented")."""
        return [e for e in self.streams.values() if e.stream_type in RM_UNIMPLEMENTED_STREAMS]

    # ---- lazy stream parsing -------------------------------------------------------------------

    def _stream(self, key: str, stream_type: int, parse: Callable[[StreamContext], T]) -> T | None:
        # A stream parsed already is read without the lock (a dict read is atomic; `close`
        # empties the cache, so a closed dump still raises below): the facts ask dozens of times.
        cached = self._cache.get(key, _UNPARSED)
        if cached is not _UNPARSED:
            return cached  # type: ignore[return-value]
        with self._lock:
            if self._closed:
                raise DumpClosed(f"{self!r} is closed")
            if key in self._cache:
                return self._cache[key]  # type: ignore[return-value]
            result: T | None = None
            entry = self.streams.get(stream_type)
            if entry is not None:
                result = self._parse_entry(entry, parse)
            self._cache[key] = result
            return result

    def _lacks(self, stream_type: int) -> bool:
        """Whether the dump has no `stream_type` stream. The parsers of the streams most dumps lack
        (Linux /proc copies, Mozilla's, Crashpad's, handles) are imported only for a dump that has
        one: importing them all cost a headless `stackwalk` process more than reading its dump."""
        if self._closed:
            raise DumpClosed(f"{self!r} is closed")
        return stream_type not in self.streams

    def _parse_entry(self, entry: DirectoryEntry, parse: Callable[[StreamContext], T]) -> T | None:
        size = entry.data_size
        if entry.rva > self.size or (entry.rva == self.size and size):
            self._problems.append(
                StreamProblem(
                    entry.stream_type, entry.rva, f"{entry.name} stream starts outside the file", BadRva.code
                )
            )
            return None
        if entry.rva + size > self.size:
            size = self.size - entry.rva
            self._problems.append(
                StreamProblem(
                    entry.stream_type,
                    entry.rva,
                    f"{entry.name} stream of {entry.data_size} bytes is cut off by the end of the file "
                    f"after {size} bytes",
                    BadRva.code,
                )
            )
        ctx = StreamContext(self.source, entry.stream_type, entry.rva, size)
        result: T | None = None
        try:
            result = parse(ctx)
        except MinidumpError as exc:
            ctx.report(exc)
        except _PARSE_FAILURES as exc:  # a parser bug on hostile input must not escape as a crash
            if strict():  # ... unless we are looking for such bugs (tests, fuzzers)
                raise
            log.debug("parser of stream %#x failed", entry.stream_type, exc_info=True)
            ctx.report(BadData(f"{entry.name}: unreadable ({type(exc).__name__}: {exc})", offset=entry.rva))
        self._problems.extend(ctx.problems)
        return result

    def parse_all(self) -> None:
        """Parse every stream this reader knows, so `problems` is complete."""
        for stream_type, name in _STREAM_PROPERTIES:
            if stream_type in self.streams:  # an absent stream has no damage to report
                getattr(self, name)

    # -- CPU contexts --

    def read_context(self, location: Location, what: str = "context") -> CpuContext:
        """Parse a context at `location` using the system info's CPU; raises `MinidumpError`.

        Without a readable SystemInfo stream the CPU is the one the thread contexts' flags
        name (`guessed_architecture`), as a problem says.
        """
        info = self.system_info
        architecture = info.processor_architecture if info is not None else self.guessed_architecture
        if architecture is None:
            raise BadData(f"{what}: no readable SystemInfo stream to tell the CPU", offset=location.rva)
        if location.data_size == 0:
            raise BadData(f"{what}: empty location", offset=location.rva)
        # A size running past the end of the file (a damaged size, or a file cut short) keeps
        # the bytes that are there: the layout needs only its own size. The caller reports the
        # damage (`reader.location_problem`).
        size = min(location.data_size, self.size - location.rva)
        if size <= 0:
            raise BadRva(f"{what} at {location.rva:#x} is outside the file", offset=location.rva)
        data = self.source.slice(location.rva, size, what)
        try:
            return context_mod.read_context(
                data,
                processor_architecture=architecture,
                endian=self.endian,
                os=self.os,
                offset=location.rva,
            )
        except MinidumpError as exc:
            raise type(exc)(f"{what}: {exc.message}", offset=exc.offset) from None

    # ---- the streams ---------------------------------------------------------------------------

    @property
    def system_info(self) -> SystemInfo | None:
        return self._stream("system_info", StreamType.SystemInfoStream, parse_system_info)

    @property
    def misc_info(self) -> MiscInfo | None:
        return self._stream("misc_info", StreamType.MiscInfoStream, parse_misc_info)

    @property
    def thread_list(self) -> ThreadList | None:
        return self._stream(
            "thread_list", StreamType.ThreadListStream, lambda c: parse_thread_list(c, self.read_context)
        )

    @property
    def thread_names(self) -> ThreadNames | None:
        return self._stream("thread_names", StreamType.ThreadNamesStream, parse_thread_names)

    @property
    def thread_info_list(self) -> ThreadInfoList | None:
        return self._stream("thread_info_list", StreamType.ThreadInfoListStream, parse_thread_info_list)

    @property
    def module_list(self) -> ModuleList | None:
        return self._stream(
            "module_list", StreamType.ModuleListStream, lambda c: parse_module_list(c, self.os)
        )

    @property
    def unloaded_module_list(self) -> UnloadedModuleList | None:
        return self._stream("unloaded_module_list", StreamType.UnloadedModuleListStream, _parse_unloaded)

    @property
    def memory_list(self) -> MemoryList | None:
        return self._stream("memory_list", StreamType.MemoryListStream, parse_memory_list)

    @property
    def memory64_list(self) -> MemoryList | None:
        return self._stream("memory64_list", StreamType.Memory64ListStream, parse_memory64_list)

    @property
    def memory_info_list(self) -> MemoryInfoList | None:
        return self._stream("memory_info_list", StreamType.MemoryInfoListStream, parse_memory_info_list)

    @property
    def exception(self) -> ExceptionStream | None:
        return self._stream(
            "exception", StreamType.ExceptionStream, lambda c: parse_exception(c, self.read_context)
        )

    @property
    def handle_data(self) -> handles.HandleData | None:
        if self._lacks(StreamType.HandleDataStream):
            return None
        from inspector.core.minidump import handles

        return self._stream("handle_data", StreamType.HandleDataStream, handles.parse_handle_data)

    @property
    def breakpad_info(self) -> BreakpadInfo | None:
        return self._stream("breakpad_info", StreamType.BreakpadInfoStream, parse_breakpad_info)

    @property
    def assertion(self) -> AssertionInfo | None:
        return self._stream("assertion", StreamType.AssertionInfoStream, parse_assertion_info)

    @property
    def crashpad_info(self) -> crashpad.CrashpadInfo | None:
        if self._lacks(StreamType.CrashpadInfoStream):
            return None
        from inspector.core.minidump import crashpad

        return self._stream("crashpad_info", StreamType.CrashpadInfoStream, crashpad.parse_crashpad_info)

    @property
    def linux_cpu_info(self) -> linux.LinuxCpuInfo | None:
        if self._lacks(StreamType.LinuxCpuInfo):
            return None
        from inspector.core.minidump import linux

        return self._stream(
            "linux_cpu_info", StreamType.LinuxCpuInfo, lambda c: linux.LinuxCpuInfo(bytes(c.data))
        )

    @property
    def linux_proc_status(self) -> linux.LinuxProcStatus | None:
        if self._lacks(StreamType.LinuxProcStatus):
            return None
        from inspector.core.minidump import linux

        return self._stream(
            "linux_proc_status", StreamType.LinuxProcStatus, lambda c: linux.LinuxProcStatus(bytes(c.data))
        )

    @property
    def linux_lsb_release(self) -> linux.LinuxLsbRelease | None:
        if self._lacks(StreamType.LinuxLsbRelease):
            return None
        from inspector.core.minidump import linux

        return self._stream(
            "linux_lsb_release", StreamType.LinuxLsbRelease, lambda c: linux.LinuxLsbRelease(bytes(c.data))
        )

    @property
    def linux_cmd_line(self) -> linux.LinuxCmdLine | None:
        if self._lacks(StreamType.LinuxCmdLine):
            return None
        from inspector.core.minidump import linux

        return self._stream(
            "linux_cmd_line", StreamType.LinuxCmdLine, lambda c: linux.LinuxCmdLine(bytes(c.data))
        )

    @property
    def linux_environ(self) -> linux.LinuxEnviron | None:
        if self._lacks(StreamType.LinuxEnviron):
            return None
        from inspector.core.minidump import linux

        return self._stream(
            "linux_environ", StreamType.LinuxEnviron, lambda c: linux.LinuxEnviron(bytes(c.data))
        )

    @property
    def linux_auxv(self) -> linux.LinuxAuxv | None:
        if self._lacks(StreamType.LinuxAuxv):
            return None
        from inspector.core.minidump import linux

        return self._stream(
            "linux_auxv", StreamType.LinuxAuxv, lambda c: linux.parse_linux_auxv(c, self.pointer_width)
        )

    @property
    def linux_maps(self) -> linux.LinuxMaps | None:
        if self._lacks(StreamType.LinuxMaps):
            return None
        from inspector.core.minidump import linux

        return self._stream("linux_maps", StreamType.LinuxMaps, linux.parse_linux_maps)

    @property
    def linux_dso_debug(self) -> linux.LinuxDsoDebug | None:
        if self._lacks(StreamType.LinuxDsoDebug):
            return None
        from inspector.core.minidump import linux

        return self._stream(
            "linux_dso_debug",
            StreamType.LinuxDsoDebug,
            lambda c: linux.parse_linux_dso_debug(c, self.pointer_width),
        )

    @property
    def mac_crash_info(self) -> mozilla.MacCrashInfo | None:
        if self._lacks(StreamType.MozMacosCrashInfoStream):
            return None
        from inspector.core.minidump import mozilla

        return self._stream(
            "mac_crash_info", StreamType.MozMacosCrashInfoStream, mozilla.parse_mac_crash_info
        )

    @property
    def mac_bootargs(self) -> mozilla.MacBootargs | None:
        if self._lacks(StreamType.MozMacosBootargsStream):
            return None
        from inspector.core.minidump import mozilla

        return self._stream("mac_bootargs", StreamType.MozMacosBootargsStream, mozilla.parse_mac_bootargs)

    @property
    def linux_limits(self) -> mozilla.LinuxLimits | None:
        if self._lacks(StreamType.MozLinuxLimits):
            return None
        from inspector.core.minidump import mozilla

        return self._stream(
            "linux_limits", StreamType.MozLinuxLimits, lambda c: mozilla.LinuxLimits(bytes(c.data))
        )

    @property
    def soft_errors(self) -> mozilla.SoftErrors | None:
        if self._lacks(StreamType.MozSoftErrors):
            return None
        from inspector.core.minidump import mozilla

        return self._stream("soft_errors", StreamType.MozSoftErrors, mozilla.parse_soft_errors)

    def __iter__(self) -> Iterator[DirectoryEntry]:
        return iter(self.directory)

    def __repr__(self) -> str:
        where = str(self.path) if self.path else "<bytes>"
        return f"<Minidump {where} {len(self.directory)} streams>"


_STREAM_PROPERTIES = (
    (StreamType.SystemInfoStream, "system_info"),
    (StreamType.MiscInfoStream, "misc_info"),
    (StreamType.ThreadListStream, "thread_list"),
    (StreamType.ThreadNamesStream, "thread_names"),
    (StreamType.ThreadInfoListStream, "thread_info_list"),
    (StreamType.ModuleListStream, "module_list"),
    (StreamType.UnloadedModuleListStream, "unloaded_module_list"),
    (StreamType.MemoryListStream, "memory_list"),
    (StreamType.Memory64ListStream, "memory64_list"),
    (StreamType.MemoryInfoListStream, "memory_info_list"),
    (StreamType.ExceptionStream, "exception"),
    (StreamType.HandleDataStream, "handle_data"),
    (StreamType.BreakpadInfoStream, "breakpad_info"),
    (StreamType.AssertionInfoStream, "assertion"),
    (StreamType.CrashpadInfoStream, "crashpad_info"),
    (StreamType.LinuxCpuInfo, "linux_cpu_info"),
    (StreamType.LinuxProcStatus, "linux_proc_status"),
    (StreamType.LinuxLsbRelease, "linux_lsb_release"),
    (StreamType.LinuxCmdLine, "linux_cmd_line"),
    (StreamType.LinuxEnviron, "linux_environ"),
    (StreamType.LinuxAuxv, "linux_auxv"),
    (StreamType.LinuxMaps, "linux_maps"),
    (StreamType.LinuxDsoDebug, "linux_dso_debug"),
    (StreamType.MozMacosCrashInfoStream, "mac_crash_info"),
    (StreamType.MozMacosBootargsStream, "mac_bootargs"),
    (StreamType.MozLinuxLimits, "linux_limits"),
    (StreamType.MozSoftErrors, "soft_errors"),
)
