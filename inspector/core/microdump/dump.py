"""`Microdump`: one microdump of a log, read into the same streams a minidump has.

A microdump holds one thread (the crashing one), its registers and stack bytes, the mapped
modules, the OS and CPU, and sometimes the crash signal. `Microdump` is a `Minidump` whose
streams come from those records instead of a directory: a system info, a one-thread thread
list, an exception (Breakpad's microdump processor always reports a crash, on thread 0), a
module list and a memory list with the stack. So the walk, every report and every pane read
it exactly as they read a minidump. What only a microdump has (the GPU line, the product and
process type, the free address space) is in `Microdump.info`.

Breakpad's facts that differ from a minidump's, kept here because Breakpad's
`microdump_stackwalk` is the reference for this format (rust-minidump does not read it):

* the OS, OS version and CPU strings are the O line's words, not derived from numbers;
* the module map follows Breakpad's: on Android an overlapping module loses its overlapping
  lower part ("truncate upper", for load-biased mappings), elsewhere a module overlapping
  one read before it is left out of address lookups; and there is no main module;
* the crash reason is the R line's signal name, or empty without an R line, at address 0.

What Breakpad takes on trust is checked: stack chunks are placed at their own addresses (a
missing line leaves a gap, not shifted bytes), overlapping chunks keep the first bytes given,
a context of the wrong size keeps its registers when they are whole. Each is a problem with
its line number.
"""

from __future__ import annotations

import _thread
from bisect import bisect_left, bisect_right

from inspector.core.errors import MinidumpError
from inspector.core.microdump.log import MicrodumpLog, MicrodumpText, scan_log
from inspector.core.microdump.model import (
    FreeSpace,
    GpuInfo,
    MicrodumpInfo,
    MicrodumpModuleList,
    MicrodumpSystemInfo,
)
from inspector.core.microdump.records import (
    MicrodumpRecords,
    ModuleRecord,
    Note,
    StackChunk,
    StackHeader,
    parse_records,
)
from inspector.core.minidump.context import (
    ContextLayout,
    CpuContext,
    architecture_of_context,
    context_size,
    cpu_of_architecture,
    layout_for,
    read_context,
    register_bytes,
)
from inspector.core.minidump.dump import Minidump
from inspector.core.minidump.errors import NotAMinidump, StreamProblem
from inspector.core.minidump.exception import ExceptionStream
from inspector.core.minidump.format import Header, Location, PlatformId, ProcessorArchitecture
from inspector.core.minidump.memory import MemoryRegion
from inspector.core.minidump.memory_lists import MemoryDescriptor, MemoryList
from inspector.core.minidump.modules import DebugId, Module, VersionInfo
from inspector.core.minidump.reader import ByteSource
from inspector.core.minidump.threads import Thread, ThreadList
from inspector.core.record import Record, field

# the microdump's facts and views live in model; their names are offered here too
__all__ = [
    "FreeSpace",
    "GpuInfo",
    "Microdump",
    "MicrodumpInfo",
    "MicrodumpModuleList",
    "MicrodumpSystemInfo",
    "NotAMicrodump",
]


class NotAMicrodump(NotAMinidump):
    """The file holds no microdump (or not the one asked for)."""

    code = "NotAMicrodump"


#: The O line's architecture words, as Breakpad's reader knows them.
ARCHITECTURES: dict[str, int] = {
    "arm": ProcessorArchitecture.ARM,
    "arm64": ProcessorArchitecture.ARM64,
    "x86": ProcessorArchitecture.INTEL,
    "mips": ProcessorArchitecture.MIPS,
    "mips64": ProcessorArchitecture.MIPS64,
}
_OPERATING_SYSTEMS = {"A": ("Android", PlatformId.ANDROID), "L": ("Linux", PlatformId.LINUX)}


class Microdump(Minidump):
    """One microdump of a log. Use `Microdump.from_bytes(data, index=)` or `open_any_dump(path)`."""

    def __init__(self, data: memoryview, *, path: str | None = None, index: int | None = None) -> None:
        # Not Minidump.__init__: there is no header or directory. The attributes the base
        # class's stream accessors use are set up empty, and the streams are put in its cache.
        self.path = path
        self._mapping = None
        self._data = data
        self._lock = _thread.RLock()
        self._cache: dict[str, object] = {}
        self._problems: list[StreamProblem] = []
        self._closed = False
        self.size = len(data)
        self.endian = "<"
        self.header = Header(0, 0, 0, 0, 0, 0, 0)
        self.source = ByteSource(data)
        self.directory = ()
        self.streams = {}
        self.log: MicrodumpLog = scan_log(data)
        dumps = self.log.dumps
        if not dumps:
            fragment = " (only the end of one, whose BEGIN line is cut off)" if self.log.notes else ""
            raise NotAMicrodump(
                f"no microdump in the file{fragment}: no '-----BEGIN BREAKPAD MICRODUMP-----' line"
            )
        if index is None:  # the first that holds anything
            index = next((i for i, d in enumerate(dumps) if not _empty(d)), 0)
        if not 0 <= index < len(dumps):
            raise NotAMicrodump(
                f"the log holds {len(dumps)} microdump{'s' if len(dumps) > 1 else ''}: "
                f"there is no microdump {index} (0 to {len(dumps) - 1})"
            )
        self.index = index
        if _empty(dumps[index]):
            begin = dumps[index].begin
            raise NotAMicrodump(
                f"not a minidump, and the microdump at line {begin.number} is empty: no record follows "
                "its BEGIN line",
                offset=begin.offset,
            )
        self.records: MicrodumpRecords = parse_records(dumps[index])
        self.info: MicrodumpInfo = self._build()

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview, index: int | None = None) -> Microdump:
        view = data if isinstance(data, memoryview) else memoryview(data)
        return cls(view.cast("B") if view.format != "B" else view, index=index)

    # ---- building the streams ----------------------------------------------------------------

    def _problem(self, offset: int, line: int, code: str, message: str) -> None:
        self._problems.append(
            StreamProblem(None, offset, f"line {line}: {message}", code, rejects_stream=False)
        )

    def _note(self, note: Note) -> None:
        self._problem(note.line.offset, note.line.number, note.code, note.message)

    def _build(self) -> MicrodumpInfo:
        records, text = self.records, self.records.text
        self._log_problems(text)
        for note in records.notes:
            self._note(note)
        architecture = self._architecture()
        context = self._context(architecture)
        os_record = records.os
        os_name, platform = _OPERATING_SYSTEMS.get(os_record.os_id if os_record else "", ("", 0))
        if os_record is not None and not os_name:
            self._problem(
                os_record.line.offset,
                os_record.line.number,
                "BadRecord",
                f"O line: unknown OS id {os_record.os_id!r} (A: Android, L: Linux)",
            )
        info = MicrodumpSystemInfo(
            processor_architecture=ProcessorArchitecture.UNKNOWN if architecture is None else architecture,
            processor_level=0,
            processor_revision=0,
            number_of_processors=os_record.cpu_count if os_record else 0,
            product_type=0,
            major_version=0,
            minor_version=0,
            build_number=0,
            platform_id=platform,
            csd_version_rva=0,
            suite_mask=0,
            cpu_data=b"",
            csd_version=None,
            os_text=os_name,
            version_text=os_record.version if os_record else "",
            arch_text=os_record.arch
            if os_record
            else ("unknown" if architecture is None else _arch_word(architecture)),
        )
        modules = self._modules(shrink=platform == PlatformId.ANDROID)
        regions = self._stack_regions()
        header = records.stack_header
        start = header.start if header is not None else (regions[0].base if regions else 0)
        stack = next((r for r in regions if r.contains(start)), regions[0] if regions else None)
        first_chunk = records.chunks[0].line if records.chunks else None
        thread = Thread(
            index=0,
            thread_id=0,
            suspend_count=0,
            priority_class=0,
            priority=0,
            teb=0,
            stack_start=start,
            stack_location=Location(
                0 if stack is None else stack.size, 0 if first_chunk is None else first_chunk.offset
            ),
            context_location=Location(
                0 if records.context is None else len(records.context.data),
                0 if records.context is None else records.context.line.offset,
            ),
            stack=stack,
            context=context,
        )
        crash = records.crash
        exception = ExceptionStream(
            thread_id=0,
            exception_code=0 if crash is None else crash.signal,
            exception_flags=0,
            exception_record=0,
            exception_address=0 if crash is None else crash.address,
            number_parameters=0,
            exception_information=(),
            context_location=thread.context_location,
            context=context,
        )
        self._cache.update(
            system_info=info,
            thread_list=ThreadList((thread,)),
            module_list=modules,
            memory_list=MemoryList(
                tuple(regions), tuple(MemoryDescriptor(r.base, r.size, r.rva) for r in regions)
            ),
            exception=exception,
        )
        gpu = records.gpu
        heap = records.heap
        return MicrodumpInfo(
            index=self.index,
            count=len(self.log.dumps),
            first_line=text.begin.number,
            last_line=text.last_line,
            complete=text.end is not None,
            process_id=text.process_id,
            product=records.product,
            process_type=records.process_type,
            os_id=None if os_record is None else os_record.os_id,
            hardware_arch=None if os_record is None else os_record.hardware_arch,
            gpu=GpuInfo() if gpu is None else GpuInfo(gpu.version, gpu.vendor, gpu.renderer),
            signal=None if crash is None else crash.signal,
            signal_name=None if crash is None else crash.signal_name,
            free_space=None
            if heap is None
            else FreeSpace(
                heap.low, heap.high, heap.hole_count, heap.largest_hole, heap.hole_sum, heap.histogram
            ),
            stack_pointer=None if header is None else header.stack_pointer,
            stack_start=None if header is None else header.start,
            stack_size=None if header is None else header.size,
        )

    def _log_problems(self, text: MicrodumpText) -> None:
        for note in self.log.notes:
            self._problem(note.offset, note.line, note.code, note.message)
        if text.end is None:
            self._problem(
                text.begin.offset,
                text.begin.number,
                "MicrodumpCutOff",
                f"the microdump has no END line ({text.cut_reason}): what follows its last line is missing",
            )
        others = [d for i, d in enumerate(self.log.dumps) if i != self.index]
        if others:
            listed = "; ".join(
                f"{i} at {d.line_span}{_state_note(d)}"
                for i, d in enumerate(self.log.dumps)
                if i != self.index
            )
            self._problem(
                text.begin.offset,
                text.begin.number,
                "MoreMicrodumps",
                f"the log holds {len(self.log.dumps)} microdumps; this is microdump {self.index} "
                f"({text.line_span}). The others: {listed} (stackwalk --microdump-index N opens another)",
            )

    def _architecture(self) -> int | None:
        """The processor architecture: the O line's word, else guessed from the context's flags."""
        records = self.records
        os_record = records.os
        context = records.context
        if os_record is not None:
            architecture = ARCHITECTURES.get(os_record.arch)
            # two arm64 layouts: the old one (writers before 2018) has its own flag and size
            if (
                architecture == ProcessorArchitecture.ARM64
                and context is not None
                and architecture_of_context(context.data) == ProcessorArchitecture.ARM64_OLD
            ):
                return int(ProcessorArchitecture.ARM64_OLD)
            if architecture is not None:
                return architecture
            self._problem(
                os_record.line.offset,
                os_record.line.number,
                "UnsupportedCpu",
                f"O line: unknown architecture {os_record.arch!r} (arm, arm64, x86, mips, mips64)",
            )
        elif records.text.records:
            first = records.text.begin
            self._problem(
                first.offset, first.number, "MissingRecord", "the microdump has no O (operating system) line"
            )
        if context is None:
            return None
        guess = architecture_of_context(context.data)
        if guess is not None:
            self._problem(
                context.line.offset,
                context.line.number,
                "GuessedCpu",
                f"the CPU ({cpu_of_architecture(guess).value}) is taken from the C line's context flags",
            )
        return guess

    def _context(self, architecture: int | None) -> CpuContext | None:
        record = self.records.context
        begin = self.records.text.begin
        if record is None:
            self._problem(
                begin.offset,
                begin.number,
                "MissingContext",
                "the microdump has no C (CPU context) line: no registers, so no frame can be shown",
            )
            return None
        line = record.line
        if architecture is None:
            self._problem(
                line.offset, line.number, "MissingContext", "the CPU is unknown: the C line cannot be read"
            )
            return None
        layout = layout_for(cpu_of_architecture(architecture))
        if architecture == ProcessorArchitecture.ARM64_OLD:
            layout = ContextLayout.ARM64_OLD
        size, needed = context_size(layout), register_bytes(layout)
        if len(record.data) < needed:
            self._problem(
                line.offset,
                line.number,
                "MissingContext",
                f"C line has {len(record.data)} bytes, too few for the registers of a {layout.value} "
                f"({needed} of its {size}): no registers",
            )
            return None
        try:
            context = read_context(record.data, processor_architecture=architecture, offset=line.offset)
        except MinidumpError as exc:
            self._problem(line.offset, line.number, exc.code, f"C line: {exc.message}")
            return None
        if len(record.data) < size:
            self._problem(
                line.offset,
                line.number,
                "ContextSize",
                f"C line has {len(record.data)} bytes, a {layout.value} has {size}: the registers are whole, "
                "the rest (floating point) reads as zeros",
            )
        elif len(record.data) > size:
            self._problem(
                line.offset,
                line.number,
                "ContextSize",
                f"C line has {len(record.data)} bytes, a {layout.value} has {size}: the rest is ignored",
            )
        return context

    def _modules(self, *, shrink: bool) -> MicrodumpModuleList:
        modules = []
        for entry in self.records.modules:
            identifier = _debug_id(entry.identifier)
            if identifier is None:
                self._problem(
                    entry.line.offset,
                    entry.line.number,
                    "BadRecord",
                    f"M line {entry.name or '?'}: identifier {entry.identifier[:40]!r} is not a debug id "
                    "(32 hex digits and an age): its symbols cannot be looked up",
                )
            modules.append(_module(entry, identifier))
        return MicrodumpModuleList(tuple(modules), shrink)

    def _stack_regions(self) -> list[MemoryRegion]:
        """The stack bytes, each chunk at its own address; the first bytes given for an address win."""
        records = self.records
        pieces = _Pieces()
        for chunk in records.chunks:
            overlaps = pieces.add(chunk)
            if overlaps:
                line = chunk.line
                first = ", ".join(str(n) for n in sorted(set(overlaps))[:3])
                self._problem(
                    line.offset,
                    line.number,
                    "StackOverlap",
                    f"S line at {chunk.address:#x} overlaps stack bytes of line {first}: "
                    "those are kept, its own bytes there are ignored",
                )
        regions = pieces.regions()
        header = records.stack_header
        begin = records.text.begin
        if not regions:
            where = header.line if header is not None else begin
            self._problem(
                where.offset,
                where.number,
                "MissingStack",
                "the microdump has no stack bytes (S lines): only the context frame can be shown",
            )
        elif header is not None:
            self._check_stack(header, regions)
        return regions

    def _check_stack(self, header: StackHeader, regions: list[MemoryRegion]) -> None:
        line = header.line
        start, end = header.start, header.start + header.size
        gaps = []
        at = start
        for region in regions:
            if region.base > at and at < end:
                gaps.append((at, min(region.base, end)))
            at = max(at, region.end)
        if at < end:
            gaps.append((at, end))
        if gaps:
            missing = sum(b - a for a, b in gaps)
            listed = ", ".join(f"{a:#x}-{b:#x}" for a, b in gaps[:4]) + (" …" if len(gaps) > 4 else "")
            self._problem(
                line.offset,
                line.number,
                "StackGap",
                f"the S 0 line announces {header.size:#x} bytes of stack at {start:#x}, but "
                f"{missing:#x} bytes have no S line ({listed}): lines of the log are missing",
            )
        outside = [r for r in regions if r.base < start or r.end > end]
        if outside:
            self._problem(
                line.offset,
                line.number,
                "StackOutside",
                f"S lines give bytes at {outside[0].base:#x}-{outside[0].end:#x}, outside the stack the "
                f"S 0 line announces ({start:#x}-{end:#x}); they are kept",
            )
        if not any(r.contains(header.stack_pointer) for r in regions):
            self._problem(
                line.offset,
                line.number,
                "StackGap",
                f"the stack pointer {header.stack_pointer:#x} of the S 0 line is in no S line's bytes",
            )

    # ---- what differs from a minidump ---------------------------------------------------------

    @property
    def guessed_architecture(self) -> int | None:
        """No guessing from stream bytes: the C line's flags were looked at while reading."""
        return None

    @property
    def crash_reason(self) -> str | None:
        """Breakpad's: the R line's signal name, '' without an R line."""
        crash = self.records.crash
        return "" if crash is None else crash.signal_name

    def __repr__(self) -> str:
        where = str(self.path) if self.path else "<bytes>"
        return f"<Microdump {where} {self.index} of {len(self.log.dumps)}>"


def _state_note(text: MicrodumpText) -> str:
    if _empty(text):
        return " (empty)"
    return "" if text.end is not None else " (cut off)"


def _empty(text: MicrodumpText) -> bool:
    return not any(line.text.strip() for line in text.records)


def _arch_word(architecture: int) -> str:
    for word, value in ARCHITECTURES.items():
        if value == architecture:
            return word
    return cpu_of_architecture(architecture).value


def _debug_id(identifier: str) -> DebugId | None:
    """The M line's id: a GUID as 32 hex digits then the age in hex (always 0 on Linux)."""
    if len(identifier) < 33 or len(identifier) > 40:
        return None
    try:
        uuid = bytes.fromhex(identifier[:32])
        age = int(identifier[32:], 16)
    except ValueError:
        return None
    return DebugId(uuid, age)


def _module(record: ModuleRecord, identifier: DebugId | None) -> Module:
    return Module(
        base=record.base,
        size=record.size,
        checksum=0,
        time_date_stamp=0,
        module_name_rva=0,
        version_info=VersionInfo(),
        cv_record=Location(0, record.line.offset),
        misc_record=Location(0, 0),
        code_file=record.name,
        codeview=None,
        debug_identifier=identifier,
        code_id="",
        debug_file=record.name,
        version=None,
    )


class _Pieces(Record, frozen=False):
    """Disjoint pieces of stack bytes by address, each from one S line (the first to give it)."""

    starts: list[int] = field(default_factory=list)
    pieces: list[tuple[int, int, bytes, int, int]] = field(
        default_factory=list
    )  # start, end, data, line, offset

    def add(self, chunk: StackChunk) -> list[int]:
        """Place the parts of `chunk` no earlier piece covers; the lines of the pieces it overlaps."""
        start = chunk.address
        end = min(start + len(chunk.data), 1 << 64)
        overlaps: list[int] = []
        at = start
        i = max(0, bisect_right(self.starts, start) - 1)
        free: list[tuple[int, int]] = []
        while i < len(self.pieces) and at < end:
            p_start, p_end, _, p_line, _ = self.pieces[i]
            if p_end <= at:
                i += 1
                continue
            if p_start >= end:
                break
            if p_start > at:
                free.append((at, p_start))
            overlaps.append(p_line)
            at = max(at, p_end)
            i += 1
        if at < end:
            free.append((at, end))
        for a, b in free:
            piece = (a, b, chunk.data[a - start : b - start], chunk.line.number, chunk.line.offset)
            index = bisect_left(self.starts, a)
            self.starts.insert(index, a)
            self.pieces.insert(index, piece)
        return overlaps

    def regions(self) -> list[MemoryRegion]:
        """Adjacent pieces joined into regions (each region's `rva` is its first line's offset)."""
        regions: list[MemoryRegion] = []
        run: list[bytes] = []
        base = rva = 0
        end = -1
        for start, stop, data, _, offset in self.pieces:
            if start != end and run:
                regions.append(_region(base, b"".join(run), rva))
                run = []
            if not run:
                base, rva = start, offset
            run.append(data)
            end = stop
        if run:
            regions.append(_region(base, b"".join(run), rva))
        return regions


def _region(base: int, data: bytes, rva: int) -> MemoryRegion:
    return MemoryRegion(base, len(data), memoryview(data), rva)
