"""A deterministic generator of damaged inputs, made from our own dumps and symbol files.

Seeds (`dump_seeds`): the bundled sample crash, the five real crashes of `tests/fixtures/crashes`
and synthetic dumps from `tests/synth` (a Windows amd64 dump with every stream type the reader
knows, a 32-bit Windows dump walked by STACK WIN, an arm64 Linux dump walked by frame pointers),
each with its own symbol files. Never anything from `../shared`.

From each seed `dump_variants` makes damaged copies, each with a readable name saying what was
damaged where (`sample/truncated/ModuleListStream/entry[2]+54`), in families:

* `truncated` — the file cut inside the header, inside every directory entry, at the start,
  middle and last byte of every stream, at and inside each list entry, and inside every blob a
  stream points to (names, CodeView records, contexts, stacks, memory);
* `header` — wrong magic, big-endian magic, wrong version, stream counts and directory offsets
  past the end of the file;
* `directory` — each entry's offset past the end, its size huge or zero, its type changed into
  another stream's;
* `huge-count` — the count of every list stream (and the header and entry sizes of the
  extended lists) set to huge values;
* `entry-field` — the fields of list entries that point elsewhere set past the end of the file
  or to huge sizes: module name RVAs, CodeView sizes and offsets, thread stack and context
  locations, memory descriptor sizes, thread name RVAs, the exception context;
* `byte-flip` — a few bytes changed at seeded random offsets;
* `file-kind` (seed-less) — empty files, files that are not dumps, a directory, a missing path.

`symbol_variants` damages `.sym` files the same way: garbage bytes, truncation, malformed
records of every type, multi-megabyte lines, hostile CFI and STACK WIN programs (division by
zero, stack underflow, hundreds of thousands of tokens) and addresses and sizes past 64 bits.

Every dump variant records the byte ranges of the original it damaged (`Damage`), and
`DumpLayout` records which bytes of the original hold what (each stream, each list entry and
the blobs it points to), so `survivors(variant)` can say what the damaged dump still holds and
the tests can check that nothing of it is lost.
"""

from __future__ import annotations

import enum
import random
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from inspector.core.minidump import Minidump, StreamType
from inspector.core.types import Cpu, Os
from tests.synth.minidump import SynthContext, SynthMinidump
from tests.synth.section import Section
from tests.synth.sym import SymBuilder

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "resources" / "examples"
CRASHES = REPO / "tests" / "fixtures" / "crashes"
CRASH_CASES = ("cxx_terminate", "fp_less_deep", "lib_callback", "libc_abort", "multithread")

INF = 1 << 64
U32 = 0xFFFF_FFFF
HEADER_LOCATOR = (0, 16)  # signature, version, stream count, directory offset

# ---- byte ranges --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Span:
    """Bytes [start, end) of the original file."""

    start: int
    end: int

    def __bool__(self) -> bool:
        return self.end > self.start


@dataclass(frozen=True, slots=True)
class Damage:
    """Bytes of the original that no longer say what they said.

    `grows` marks a count or size made larger: everything it counted is still where it was
    (the reader must still find it all).
    """

    start: int
    end: int
    grows: bool = False

    def hits(self, span: Span | None) -> bool:
        return span is not None and bool(span) and self.start < span.end and span.start < self.end


# ---- what the original holds where ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ListSpec:
    """How a list stream is laid out, and which fields of an entry point elsewhere."""

    extended: bool  # header size, entry size, count (else: u32 count, then entries)
    entry_size: int
    #: name -> (offset of the size field, offset of the RVA field) in an entry
    locations: tuple[tuple[str, int, int], ...] = ()
    #: name -> offset of a string RVA in an entry
    strings: tuple[tuple[str, int], ...] = ()


LIST_STREAMS: dict[int, ListSpec] = {
    StreamType.ThreadListStream: ListSpec(False, 48, (("stack", 32, 36), ("context", 40, 44))),
    StreamType.ModuleListStream: ListSpec(False, 108, (("cv", 76, 80), ("misc", 84, 88)), (("name", 20),)),
    StreamType.MemoryListStream: ListSpec(False, 16, (("memory", 8, 12),)),
    StreamType.ThreadNamesStream: ListSpec(False, 12, (), (("name", 4),)),
    StreamType.UnloadedModuleListStream: ListSpec(True, 24, (), (("name", 20),)),
    StreamType.ThreadInfoListStream: ListSpec(True, 64),
    StreamType.MemoryInfoListStream: ListSpec(True, 48),
    StreamType.HandleDataStream: ListSpec(True, 32),
}


@dataclass(frozen=True, slots=True)
class StreamLayout:
    stream_type: int
    name: str
    index: int  # in the directory
    entry: Span  # its directory entry
    body: Span
    count: Span | None = None  # the count field of a list stream
    entries: tuple[Span, ...] = ()
    #: (label, span) of every blob the stream points to: "entry[1].name", "context", …
    blobs: tuple[tuple[str, Span], ...] = ()


@dataclass(frozen=True, slots=True)
class ModuleFacts:
    index: int
    base: int
    size: int
    code_file: str
    debug_id: str
    record: Span
    name: Span | None
    codeview: Span | None


@dataclass(frozen=True, slots=True)
class ThreadFacts:
    index: int
    thread_id: int
    record: Span
    context: Span | None
    stack: Span | None


@dataclass(frozen=True, slots=True)
class DumpLayout:
    size: int
    directory: Span
    streams: dict[int, StreamLayout]
    modules: tuple[ModuleFacts, ...]
    threads: tuple[ThreadFacts, ...]
    exception_context: Span | None
    csd_version: Span | None
    memory: tuple[Span, ...]

    def stream(self, stream_type: int) -> StreamLayout | None:
        return self.streams.get(stream_type)


def _string_span(dump: Minidump, rva: int) -> Span | None:
    """A MINIDUMP_STRING: its length, its UTF-16 text and the NUL after it."""
    if not rva or not dump.source.has(rva, 4):
        return None
    length = dump.source.u32(rva)
    return Span(rva, min(rva + 4 + length + 2, dump.size))


def _location_span(size: int, rva: int) -> Span | None:
    return Span(rva, rva + size) if size and rva else None


def layout_of(data: bytes) -> DumpLayout:
    """Where everything is in an undamaged dump (read with our reader, which the golden tests check)."""
    dump = Minidump.from_bytes(data)
    dump.parse_all()
    assert not dump.problems, f"a seed must be undamaged: {dump.problems}"
    source = dump.source
    directory_rva = dump.header.stream_directory_rva
    streams: dict[int, StreamLayout] = {}
    for entry in dump.streams.values():
        body = Span(entry.rva, entry.rva + entry.data_size)
        dir_span = Span(directory_rva + 12 * entry.index, directory_rva + 12 * entry.index + 12)
        spec = LIST_STREAMS.get(entry.stream_type)
        count = None
        entries: list[Span] = []
        blobs: list[tuple[str, Span]] = []
        if spec is not None:
            if spec.extended:
                header_size, stride, n = struct.unpack_from("<III", data, entry.rva)
                count = Span(entry.rva + 8, entry.rva + 12)
                first = entry.rva + header_size
            else:
                n = source.u32(entry.rva)
                count = Span(entry.rva, entry.rva + 4)
                stride = spec.entry_size
                first = entry.rva + 4 + (4 if entry.data_size == 8 + n * stride else 0)
            for i in range(n):
                at = first + i * stride
                entries.append(Span(at, at + stride))
                for label, size_at, rva_at in spec.locations:
                    size, rva = struct.unpack_from("<II", data, at + size_at)[0], source.u32(at + rva_at)
                    span = _location_span(size, rva)
                    if span:
                        blobs.append((f"entry[{i}].{label}", span))
                for label, rva_at in spec.strings:
                    rva = struct.unpack_from(
                        "<Q" if label == "name" and spec.entry_size == 12 else "<I", data, at + rva_at
                    )[0]
                    span = _string_span(dump, rva)
                    if span:
                        blobs.append((f"entry[{i}].{label}", span))
        elif entry.stream_type == StreamType.ExceptionStream:
            span = _location_span(*struct.unpack_from("<II", data, entry.rva + 160))
            if span:
                blobs.append(("context", span))
        elif entry.stream_type == StreamType.SystemInfoStream:
            span = _string_span(dump, source.u32(entry.rva + 24))
            if span:
                blobs.append(("csd_version", span))
        elif entry.stream_type == StreamType.Memory64ListStream:
            n, base_rva = struct.unpack_from("<QQ", data, entry.rva)
            count = Span(entry.rva, entry.rva + 8)
            rva = base_rva
            for i in range(n):
                at = entry.rva + 16 + 16 * i
                entries.append(Span(at, at + 16))
                size = struct.unpack_from("<Q", data, at + 8)[0]
                blobs.append((f"entry[{i}].memory", Span(rva, rva + size)))
                rva += size
        streams[entry.stream_type] = StreamLayout(
            entry.stream_type, entry.name, entry.index, dir_span, body, count, tuple(entries), tuple(blobs)
        )

    def blob(stream_type: int, label: str) -> Span | None:
        layout = streams.get(stream_type)
        return None if layout is None else dict(layout.blobs).get(label)

    module_layout = streams.get(StreamType.ModuleListStream)
    modules = tuple(
        ModuleFacts(
            i,
            m.base,
            m.size,
            m.code_file,
            m.debug_id,
            module_layout.entries[i] if module_layout else Span(0, 0),
            blob(StreamType.ModuleListStream, f"entry[{i}].name"),
            blob(StreamType.ModuleListStream, f"entry[{i}].cv"),
        )
        for i, m in enumerate(dump.modules)
    )
    thread_layout = streams.get(StreamType.ThreadListStream)
    threads = tuple(
        ThreadFacts(
            t.index,
            t.thread_id,
            thread_layout.entries[t.index] if thread_layout else Span(0, 0),
            blob(StreamType.ThreadListStream, f"entry[{t.index}].context"),
            blob(StreamType.ThreadListStream, f"entry[{t.index}].stack"),
        )
        for t in dump.threads
    )
    memory_layout = streams.get(StreamType.MemoryListStream)
    memory = tuple(span for _, span in memory_layout.blobs) if memory_layout else ()
    result = DumpLayout(
        len(data),
        Span(directory_rva, directory_rva + 12 * len(dump.directory)),
        streams,
        modules,
        threads,
        blob(StreamType.ExceptionStream, "context"),
        blob(StreamType.SystemInfoStream, "csd_version"),
        memory,
    )
    dump.close()
    return result


# ---- seeds ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class DumpSeed:
    name: str
    data: bytes
    symbol_paths: tuple[Path, ...]
    layout: DumpLayout


def _synthetic_windows_amd64(symbols: Path | None) -> bytes:
    """Every stream type the reader knows, and a crashing thread walked by CFI through app.exe."""
    app_id = "5A9832E5287241C1838ED98914E9B7FF1"
    stack = Section(start=0x7FFF0000)
    stack.d64(0x402010).d64(0x403010).append(bytes(48))
    for i in range(8):
        stack.d64(0x900000 + i)  # data pointers: not code
    if symbols is not None:
        rules = ".cfa: $rsp 8 + .ra: .cfa -8 + ^"
        (
            SymBuilder(os="windows", debug_id=app_id, name="app.pdb")
            .file(0, "c:\\src\\app.c")
            .func(0x1000, 0x100, "crash_here", lines=[(0x1000, 0x100, 10, 0)])
            .func(0x2000, 0x100, "caller", lines=[(0x2000, 0x100, 20, 0)])
            .func(0x3000, 0x100, "main", lines=[(0x3000, 0x100, 30, 0)])
            .cfi(0x1000, 0x100, rules)
            .cfi(0x2000, 0x100, rules)
            .write_to_store(symbols, "app.pdb")
        )
    return (
        SynthMinidump(cpu=Cpu.AMD64, os=Os.WINDOWS)
        .add_thread(1, context=SynthContext.amd64(rip=0x401010, rsp=0x7FFF0000, rbp=0), stack=stack)
        .add_thread(2, context=SynthContext.amd64(rip=0x402020, rsp=0x7FFF8000))
        .add_module(0x400000, 0x10000, "c:\\app\\app.exe", debug_id=app_id, debug_file="app.pdb")
        .add_module(
            0x7FF00000, 0x20000, "c:\\windows\\ntdll.dll", pdb20=(0x12345678, 2), version=(10, 0, 1, 2)
        )
        .add_unloaded_module(0x500000, 0x1000, "gone.dll")
        .add_exception(
            1, 0xC0000005, parameters=(1, 0x45), context=SynthContext.amd64(rip=0x401010, rsp=0x7FFF0000)
        )
        .add_misc_info(process_id=9, process_create_time=5, version=5)
        .add_thread_names({1: "main", 2: "worker"})
        .add_thread_info([{"thread_id": 1}, {"thread_id": 2}])
        .add_memory_info([(0x400000, 0x10000, 0x1000, 0x20, 0x1000000)])
        .add_memory64(0x900000, b"m" * 64)
        .add_breakpad_info(requesting_thread_id=1)
        .add_assertion(expression="e", line=3)
        .add_crashpad_info(simple_annotations={"k": "v"}, modules={0: {"annotation_objects": {"a": "b"}}})
        .add_handle_data([(4, "File", "x"), (8, "Event", None)])
        .add_linux_cpu_info("microcode : 0x1\n")
        .add_linux_maps("00400000-00410000 r-xp 00000000 00:00 0 /x\n")
        .add_text_stream(StreamType.MozSoftErrors, "[]")
        .finish()
    )


def _synthetic_windows_x86(symbols: Path | None) -> bytes:
    """A 32-bit Windows crash whose frames come from STACK WIN programs."""
    app_id = "1B4F5A0D6C8E4A5B9F3C2D1E0A9B8C7D1"
    stack = Section(start=0x20000)
    # frame 0 (FRAME_DATA with a program): return address at esp, then the caller's frame
    stack.d32(0x1402010).d32(0x20100).d32(0x1403010).append(bytes(52))
    if symbols is not None:
        program = "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + ="
        (
            SymBuilder(os="windows", cpu="x86", debug_id=app_id, name="app32.pdb")
            .func(0x1000, 0x100, "crash_here", parameter_size=4)
            .func(0x2000, 0x100, "caller")
            .func(0x3000, 0x100, "main")
            .stack_win(4, 0x1000, 0x100, program=program)
            .stack_win(4, 0x2000, 0x100, saved_registers=4, program=program)
            .write_to_store(symbols, "app32.pdb")
        )
    return (
        SynthMinidump(cpu=Cpu.X86, os=Os.WINDOWS)
        .add_thread(7, context=SynthContext.x86(eip=0x1401010, esp=0x20000, ebp=0x20100), stack=stack)
        .add_module(0x1400000, 0x10000, "c:\\app32\\app32.exe", debug_id=app_id, debug_file="app32.pdb")
        .add_exception(7, 0xC0000005, parameters=(0, 0), context=SynthContext.x86(eip=0x1401010, esp=0x20000))
        .add_misc_info(process_id=11, process_create_time=5, version=2)
        .finish()
    )


def _synthetic_arm64_linux(symbols: Path | None) -> bytes:
    """An arm64 Linux crash walked by its frame-pointer chain."""
    build_id = bytes(range(1, 21))
    stack = Section(start=0x7F000000)
    # frame records: (saved fp, saved lr)
    stack.d64(0x7F000010).d64(0x400200).d64(0x7F000020).d64(0x400300).d64(0).d64(0).append(bytes(64))
    if symbols is not None:
        debug_id = "04030201060508070910111213141516" + "0"
        (
            SymBuilder(cpu="arm64", debug_id=debug_id, name="armapp")
            .func(0x100, 0x80, "crash_here")
            .func(0x1C0, 0x80, "caller")
            .func(0x2C0, 0x80, "main")
            .write_to_store(symbols, "armapp")
        )
    return (
        SynthMinidump(cpu=Cpu.ARM64, os=Os.LINUX)
        .add_thread(
            3,
            context=SynthContext.arm64(pc=0x400110, sp=0x7F000000, fp=0x7F000000, lr=0x400200),
            stack=stack,
        )
        .add_module(0x400000, 0x1000, "/usr/bin/armapp", build_id=build_id)
        .add_exception(
            3,
            code=11,
            flags=1,
            context=SynthContext.arm64(pc=0x400110, sp=0x7F000000, fp=0x7F000000, lr=0x400200),
        )
        .add_linux_proc_status("Name:\tarmapp\nPid:\t42\n")
        .add_linux_lsb_release("DISTRIB_ID=Debian\nDISTRIB_RELEASE=12\n")
        .finish()
    )


SYNTHETIC: dict[str, Callable[[Path | None], bytes]] = {
    "synth-windows-amd64": _synthetic_windows_amd64,
    "synth-windows-x86": _synthetic_windows_x86,
    "synth-linux-arm64": _synthetic_arm64_linux,
}


def synthetic_dump_bytes() -> list[bytes]:
    """The synthetic seeds' bytes (for the fuzzers' seed corpora)."""
    return [make(None) for make in SYNTHETIC.values()]


def dump_seeds(workdir: Path) -> list[DumpSeed]:
    """Every seed; synthetic symbol files are written under `workdir`."""
    seeds = [
        DumpSeed(
            "sample",
            (EXAMPLES / "sample.dmp").read_bytes(),
            (EXAMPLES / "symbols",),
            layout_of((EXAMPLES / "sample.dmp").read_bytes()),
        )
    ]
    for case in CRASH_CASES:
        data = (CRASHES / case / f"{case}.dmp").read_bytes()
        seeds.append(
            DumpSeed(case, data, (CRASHES / case / "symbols", CRASHES / "system-symbols"), layout_of(data))
        )
    for name, make in SYNTHETIC.items():
        symbols = workdir / name
        symbols.mkdir(parents=True, exist_ok=True)
        data = make(symbols)
        seeds.append(DumpSeed(name, data, (symbols,), layout_of(data)))
    return seeds


# ---- dump variants ----------------------------------------------------------------------------------


class InputKind(enum.Enum):
    FILE = "file"
    DIRECTORY = "directory"
    MISSING = "missing"


@dataclass(frozen=True, slots=True, eq=False)
class DumpVariant:
    name: str
    family: str
    seed: DumpSeed | None
    data: bytes = b""
    kind: InputKind = InputKind.FILE
    damage: tuple[Damage, ...] = ()
    #: the reader must notice this damage (refuse the file, or record a problem)
    detectable: bool = True

    def materialize(self, directory: Path) -> Path:
        """The variant as a path under `directory` (a file, a directory, or a path that does not exist)."""
        safe = self.name.replace("/", "__").replace("[", "(").replace("]", ")").replace(" ", "_")
        path = directory / f"{safe}.dmp"
        if self.kind is InputKind.FILE and not path.exists():
            path.write_bytes(self.data)
        elif self.kind is InputKind.DIRECTORY:
            path.mkdir(exist_ok=True)
        return path


def _truncated(seed: DumpSeed, at: int, where: str) -> DumpVariant:
    return DumpVariant(
        f"{seed.name}/truncated/{where}", "truncated", seed, seed.data[:at], damage=(Damage(at, INF),)
    )


def _patched(
    seed: DumpSeed,
    family: str,
    where: str,
    at: int,
    raw: bytes,
    *,
    grows: bool = False,
    detectable: bool = True,
) -> DumpVariant:
    data = bytearray(seed.data)
    data[at : at + len(raw)] = raw
    return DumpVariant(
        f"{seed.name}/{family}/{where}",
        family,
        seed,
        bytes(data),
        damage=(Damage(at, at + len(raw), grows),),
        detectable=detectable,
    )


def _u32(value: int) -> bytes:
    return (value & U32).to_bytes(4, "little")


def _spread(items: list[int], most: int) -> list[int]:
    """At most `most` items, evenly spread (always the first and the last)."""
    if len(items) <= most:
        return items
    step = (len(items) - 1) / (most - 1)
    return sorted({items[round(i * step)] for i in range(most)})


def truncations(seed: DumpSeed) -> Iterator[DumpVariant]:
    layout = seed.layout
    for at in (1, 4, 8, 12, 16, 31):
        yield _truncated(seed, at, f"header+{at}")
    for i in range(len(layout.streams)):
        start = layout.directory.start + 12 * i
        yield _truncated(seed, start + 6, f"directory[{i}]+6")
    seen: set[int] = set()
    for stream in sorted(layout.streams.values(), key=lambda s: s.body.start):
        body = stream.body
        points = {
            "start": body.start,
            "+1": body.start + 1,
            "middle": (body.start + body.end) // 2,
            "end-1": body.end - 1,
        }
        for label, at in points.items():
            if body.start <= at < body.end and at not in seen:
                seen.add(at)
                yield _truncated(seed, at, f"{stream.name}/{label}")
        for i in _spread(list(range(len(stream.entries))), 4):
            entry = stream.entries[i]
            for at, label in (
                (entry.start, f"entry[{i}]"),
                (
                    entry.start + (entry.end - entry.start) // 2,
                    f"entry[{i}]+{(entry.end - entry.start) // 2}",
                ),
            ):
                if at not in seen and at < layout.size:
                    seen.add(at)
                    yield _truncated(seed, at, f"{stream.name}/{label}")
        for label, span in _spread_blobs(stream.blobs, 6):
            at = span.start + (span.end - span.start) // 2
            if at not in seen and at < layout.size:
                seen.add(at)
                yield _truncated(seed, at, f"{stream.name}/{label}+{at - span.start}")


def _spread_blobs(blobs: tuple[tuple[str, Span], ...], most: int) -> list[tuple[str, Span]]:
    return [blobs[i] for i in _spread(list(range(len(blobs))), most)]


def header_damage(seed: DumpSeed) -> Iterator[DumpVariant]:
    size = seed.layout.size
    yield _patched(seed, "header", "magic=XXXX", 0, b"XXXX")
    yield _patched(seed, "header", "magic=big-endian", 0, b"PMDM")
    yield _patched(seed, "header", "version=0x1234", 4, _u32(0x1234))
    yield _patched(seed, "header", "stream-count=0", 8, _u32(0))
    yield _patched(seed, "header", "stream-count=0xffffffff", 8, _u32(U32), grows=True)
    # one entry more: the bytes after the directory read as an entry, which may well look valid
    yield _patched(
        seed, "header", "stream-count+1", 8, _u32(len(seed.layout.streams) + 1), grows=True, detectable=False
    )
    yield _patched(seed, "header", "directory-rva=past-end", 12, _u32(size + 0x1000))
    yield _patched(seed, "header", "directory-rva=0xffffffff", 12, _u32(U32))
    yield _patched(seed, "header", "directory-rva=4", 12, _u32(4))


TEXT_STREAMS = frozenset(
    {
        StreamType.LinuxCpuInfo,
        StreamType.LinuxProcStatus,
        StreamType.LinuxLsbRelease,
        StreamType.LinuxCmdLine,
        StreamType.LinuxEnviron,
        StreamType.LinuxMaps,
        StreamType.MozSoftErrors,
        StreamType.MozLinuxLimits,
    }
)


def directory_damage(seed: DumpSeed) -> Iterator[DumpVariant]:
    layout = seed.layout
    size = layout.size
    types = [s.stream_type for s in sorted(layout.streams.values(), key=lambda s: s.index)]
    for stream in sorted(layout.streams.values(), key=lambda s: s.index):
        at = stream.entry.start
        where = f"{stream.name}(directory[{stream.index}])"
        yield _patched(seed, "directory", f"{where}.rva=past-end", at + 8, _u32(size + 16))
        yield _patched(seed, "directory", f"{where}.size=0xffffffff", at + 4, _u32(U32), grows=True)
        # an empty text stream (/proc copies, soft errors) is a valid, empty stream
        structured = stream.stream_type not in TEXT_STREAMS
        yield _patched(seed, "directory", f"{where}.size=0", at + 4, _u32(0), detectable=structured)
        other = types[(types.index(stream.stream_type) + 1) % len(types)]
        if other != stream.stream_type:
            yield _patched(seed, "directory", f"{where}.type=0x{other:x}", at, _u32(other))


def huge_counts(seed: DumpSeed) -> Iterator[DumpVariant]:
    for stream in seed.layout.streams.values():
        spec = LIST_STREAMS.get(stream.stream_type)
        if stream.count is None:
            continue
        at = stream.count.start
        original = int.from_bytes(seed.data[at : at + 4], "little")
        for value, label in ((U32, "0xffffffff"), (0x7FFFFFFF, "0x7fffffff"), (original + 1, "count+1")):
            yield _patched(seed, "huge-count", f"{stream.name}.count={label}", at, _u32(value), grows=True)
        if stream.stream_type == StreamType.Memory64ListStream:
            yield _patched(
                seed,
                "huge-count",
                f"{stream.name}.base_rva=past-end",
                at + 8,
                (seed.layout.size + 64).to_bytes(8, "little"),
            )
        if spec is not None and spec.extended:
            base = stream.body.start
            yield _patched(seed, "huge-count", f"{stream.name}.header_size=0xffffffff", base, _u32(U32))
            yield _patched(seed, "huge-count", f"{stream.name}.entry_size=0xffffffff", base + 4, _u32(U32))
            yield _patched(seed, "huge-count", f"{stream.name}.entry_size=0", base + 4, _u32(0))


def entry_fields(seed: DumpSeed) -> Iterator[DumpVariant]:
    layout = seed.layout
    past = layout.size + 0x100
    for stream in layout.streams.values():
        spec = LIST_STREAMS.get(stream.stream_type)
        if spec is None:
            continue
        for i in _spread(list(range(len(stream.entries))), 3):
            entry = stream.entries[i]
            where = f"{stream.name}/entry[{i}]"
            for label, size_at, rva_at in spec.locations:
                # a location of size 0 points nowhere: moving it is no damage
                used = (
                    int.from_bytes(seed.data[entry.start + size_at : entry.start + size_at + 4], "little") > 0
                )
                yield _patched(
                    seed,
                    "entry-field",
                    f"{where}.{label}.size=0xffffffff",
                    entry.start + size_at,
                    _u32(U32),
                    detectable=used,
                )
                yield _patched(
                    seed,
                    "entry-field",
                    f"{where}.{label}.rva=past-end",
                    entry.start + rva_at,
                    _u32(past),
                    detectable=used,
                )
            for label, rva_at in spec.strings:
                yield _patched(
                    seed, "entry-field", f"{where}.{label}-rva=past-end", entry.start + rva_at, _u32(past)
                )
                yield _patched(
                    seed, "entry-field", f"{where}.{label}-rva=0xffffffff", entry.start + rva_at, _u32(U32)
                )
                rva = int.from_bytes(seed.data[entry.start + rva_at : entry.start + rva_at + 4], "little")
                if rva and rva + 4 <= layout.size:
                    yield _patched(
                        seed, "entry-field", f"{where}.{label}.length=0xfffffffe", rva, _u32(0xFFFFFFFE)
                    )
                    yield _patched(seed, "entry-field", f"{where}.{label}.length=odd", rva, _u32(7))
            if stream.stream_type == StreamType.ModuleListStream:
                yield _patched(seed, "entry-field", f"{where}.size_of_image=0", entry.start + 8, _u32(0))
                yield _patched(
                    seed,
                    "entry-field",
                    f"{where}.base=overflowing",
                    entry.start,
                    (0xFFFFFFFFFFFFF000).to_bytes(8, "little"),
                )
                cv_size, cv_rva = struct.unpack_from("<II", seed.data, entry.start + 76)
                if cv_size >= 4 and cv_rva + 4 <= layout.size:
                    yield _patched(
                        seed,
                        "entry-field",
                        f"{where}.cv.signature=unknown",
                        cv_rva,
                        b"XXXX",
                        detectable=False,
                    )
                    yield _patched(seed, "entry-field", f"{where}.cv.size=3", entry.start + 76, _u32(3))
            if stream.stream_type == StreamType.ThreadListStream:
                yield _patched(seed, "entry-field", f"{where}.context.size=16", entry.start + 40, _u32(16))
                yield _patched(seed, "entry-field", f"{where}.context.size=0", entry.start + 40, _u32(0))
                ctx_rva = int.from_bytes(seed.data[entry.start + 44 : entry.start + 48], "little")
                if ctx_rva + 4 <= layout.size:
                    yield _patched(
                        seed,
                        "entry-field",
                        f"{where}.context.flags=0",
                        ctx_rva + _flags_offset(seed),
                        _u32(0),
                    )
    exception = layout.stream(StreamType.ExceptionStream)
    if exception is not None:
        at = exception.body.start + 160
        yield _patched(seed, "entry-field", "ExceptionStream.context.size=0xffffffff", at, _u32(U32))
        yield _patched(seed, "entry-field", "ExceptionStream.context.rva=past-end", at + 4, _u32(past))
        yield _patched(
            seed,
            "entry-field",
            "ExceptionStream.thread_id=unknown",
            exception.body.start,
            _u32(0xDEAD),
            detectable=False,
        )
    system = layout.stream(StreamType.SystemInfoStream)
    if system is not None:
        at = system.body.start
        yield _patched(seed, "entry-field", "SystemInfoStream.csd_version_rva=past-end", at + 24, _u32(past))
        yield _patched(
            seed,
            "entry-field",
            "SystemInfoStream.processor_architecture=0x1234",
            at,
            (0x1234).to_bytes(2, "little"),
            detectable=False,
        )


def _flags_offset(seed: DumpSeed) -> int:
    """Offset of context_flags in the seed's CPU context (amd64 has six home registers first)."""
    dump = Minidump.from_bytes(seed.data)
    cpu = dump.cpu
    dump.close()
    return 0x30 if cpu is Cpu.AMD64 else 0


def byte_flips(seed: DumpSeed, count: int) -> Iterator[DumpVariant]:
    rng = random.Random(f"byte-flips/{seed.name}")
    for n in range(count):
        data = bytearray(seed.data)
        damage = []
        flips = []
        for _ in range(rng.randint(1, 8)):
            at = rng.randrange(len(data))
            value = rng.choice((0x00, 0xFF, 0x7F, 0x80, rng.randrange(256)))
            if data[at] == value:
                value ^= 0x01
            data[at] = value
            damage.append(Damage(at, at + 1))
            flips.append(f"{at:#x}={value:02x}")
        yield DumpVariant(
            f"{seed.name}/byte-flip/{n}:{','.join(flips)}",
            "byte-flip",
            seed,
            bytes(data),
            damage=tuple(damage),
            detectable=False,
        )


def file_kinds() -> Iterator[DumpVariant]:
    sample = (EXAMPLES / "sample.dmp").read_bytes()
    made: list[tuple[str, bytes]] = [
        ("empty", b""),
        ("one-byte", b"M"),
        ("magic-only", b"MDMP"),
        ("header-only", sample[:32]),
        ("png", b"\x89PNG\r\n\x1a\n" + bytes(64)),
        ("text", b"this is not a minidump, just a note\n" * 4),
        (
            "microdump",
            b"I/DEBUG: -----BEGIN BREAKPAD MICRODUMP-----\nO A arm64\n-----END BREAKPAD MICRODUMP-----\n",
        ),
        ("upload-wrapper", b"--boundary\r\nContent-Type: application/octet-stream\r\n\r\n" + sample),
        ("random-4k", random.Random("random-4k").randbytes(4096)),
        ("zeros-4k", bytes(4096)),
        ("sym-file", (EXAMPLES / "symbols").glob("*/*/*.sym").__next__().read_bytes()[:2048]),
    ]
    for name, data in made:
        yield DumpVariant(f"file-kind/{name}", "file-kind", None, data)
    yield DumpVariant("file-kind/directory", "file-kind", None, kind=InputKind.DIRECTORY)
    yield DumpVariant("file-kind/missing", "file-kind", None, kind=InputKind.MISSING)


#: byte-flip variants per seed
FLIPS_PER_SEED = 24


def dump_variants(seeds: Iterable[DumpSeed]) -> list[DumpVariant]:
    """Every damaged dump, in a stable order; names are unique."""
    variants: list[DumpVariant] = list(file_kinds())
    for seed in seeds:
        for family in (truncations, header_damage, directory_damage, huge_counts, entry_fields):
            variants.extend(family(seed))
        variants.extend(byte_flips(seed, FLIPS_PER_SEED))
    names = [v.name for v in variants]
    duplicates = {n for n in names if names.count(n) > 1}
    assert not duplicates, duplicates
    return variants


# ---- what a damaged dump still holds --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Survivors:
    """What the output of a damaged dump must still show (facts of the original)."""

    system: bool  # OS and CPU
    crash: bool  # crash reason and address
    modules: tuple[int, ...]  # indexes of modules that must be listed (base, size, name, debug id)
    threads: tuple[int, ...]  # indexes of threads that must be listed (thread id)
    first_frames: tuple[int, ...]  # threads whose context frame must be the original's
    walks: tuple[int, ...]  # threads whose every frame must be the original's


def _directory_of(data: bytes) -> list[tuple[int, int, int]] | None:
    """(type, size, rva) of every readable directory entry of a (damaged) file, None without a header."""
    if len(data) < 32 or data[:4] != b"MDMP":
        return None
    count, rva = struct.unpack_from("<II", data, 8)
    n = min(count, max(0, (len(data) - rva) // 12)) if rva < len(data) else 0
    entries = [struct.unpack_from("<III", data, rva + 12 * i) for i in range(n)]
    if n < count:  # a count running off the file: the reader keeps the entries that look like entries
        known = {int(t) for t in StreamType} - {0}
        plausible = [i for i, (t, _, at) in enumerate(entries) if t not in known or at < 32]
        entries = entries[: plausible[0]] if plausible else entries
    return entries


def survivors(variant: DumpVariant) -> Survivors:
    """What the damaged dump still holds, judged from the bytes the damage did not touch."""
    seed = variant.seed
    if seed is None or variant.kind is not InputKind.FILE:
        return Survivors(False, False, (), (), (), ())
    layout = seed.layout
    damage = variant.damage
    directory = _directory_of(variant.data)

    def intact(*spans: Span | None, growth_ok: bool = False) -> bool:
        return not any(
            d.hits(s) for d in damage for s in spans if s is not None and not (growth_ok and d.grows)
        )

    header = Span(*HEADER_LOCATOR)

    def stream_found(stream_type: int) -> bool:
        """The original directory entry is still the one used for its type."""
        stream = layout.stream(stream_type)
        if stream is None or directory is None:
            return False
        if not intact(header, stream.entry, growth_ok=True):
            return False
        used = [i for i, (t, _, _) in enumerate(directory) if t == stream_type]
        return bool(used) and used[-1] == stream.index

    def stream_intact(stream_type: int, *, whole: bool = False) -> bool:
        stream = layout.stream(stream_type)
        if stream is None:
            return True  # the original has none: nothing to lose
        if not stream_found(stream_type):
            return False
        spans = [stream.body] if whole else [stream.count]
        if whole:
            spans += [span for _, span in stream.blobs]
        return intact(*spans, growth_ok=not whole)

    system = stream_found(StreamType.SystemInfoStream) and intact(
        layout.stream(StreamType.SystemInfoStream).body,
        layout.csd_version,  # type: ignore[union-attr]
    )
    exception_ok = stream_intact(StreamType.ExceptionStream, whole=True)
    crash = system and exception_ok and layout.stream(StreamType.ExceptionStream) is not None
    modules_listed = stream_found(StreamType.ModuleListStream) and stream_intact(StreamType.ModuleListStream)
    modules = tuple(
        m.index for m in layout.modules if modules_listed and intact(m.record, m.name, m.codeview)
    )
    all_modules = len(modules) == len(layout.modules) and stream_intact(
        StreamType.ModuleListStream, whole=True
    )
    threads_listed = stream_found(StreamType.ThreadListStream) and stream_intact(StreamType.ThreadListStream)
    threads = tuple(t.index for t in layout.threads if threads_listed and intact(t.record))
    # which thread crashed, which wrote the dump, and where its registers come from
    context_streams = all(
        stream_intact(t, whole=True) for t in (StreamType.ExceptionStream, StreamType.BreakpadInfoStream)
    )
    first = tuple(
        t.index
        for t in layout.threads
        if t.index in threads and system and context_streams and intact(t.context)
    )
    memory_ok = stream_intact(StreamType.MemoryListStream, whole=True) and stream_intact(
        StreamType.Memory64ListStream, whole=True
    )
    walks = tuple(
        t.index for t in layout.threads if t.index in first and all_modules and memory_ok and intact(t.stack)
    )
    return Survivors(system, crash, modules, threads, first, walks)


# ---- symbol-file variants ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class SymVariant:
    """A damaged `.sym` file that replaces `target` (a file of a seed's symbol store)."""

    name: str
    family: str
    seed: DumpSeed
    target: Path  # relative to the store root
    data: bytes
    #: FUNC records whose whole block is unchanged (address, name): they must still resolve
    intact_functions: tuple[tuple[int, str], ...] = ()
    #: the damage must show in the file's damage report
    detectable: bool = True


def _sym_records(text: bytes) -> list[tuple[int, int, bytes]]:
    """(start, end, line) of every line."""
    out = []
    pos = 0
    for line in text.split(b"\n"):
        out.append((pos, pos + len(line) + 1, line))
        pos += len(line) + 1
    return out


def _function_blocks(text: bytes) -> list[tuple[int, int, int, str]]:
    """(block start, block end, address, name) of every FUNC and its line records."""
    blocks = []
    current: list[object] | None = None
    for start, end, line in _sym_records(text):
        if line.startswith(b"FUNC "):
            if current is not None:
                blocks.append(tuple(current))
            parts = line.split(b" ", 4)
            if parts[1] == b"m":
                parts = line.split(b" ", 5)[1:]
            current = [start, end, int(parts[1], 16), parts[4].decode("utf-8", "replace")]
        elif current is not None and line[:1] in b"0123456789abcdef" and line:
            current[1] = end
        elif current is not None:
            blocks.append(tuple(current))
            current = None
    if current is not None:
        blocks.append(tuple(current))
    return blocks  # type: ignore[return-value]


def _intact_functions(original: bytes, damaged_from: int, damaged_to: int) -> tuple[tuple[int, str], ...]:
    return tuple(
        (address, name)
        for start, end, address, name in _function_blocks(original)
        if end <= damaged_from or start >= damaged_to
    )


HOSTILE_CFI = {
    "division-by-zero": ".cfa: $rsp 0 / .ra: .cfa -8 + ^",
    "remainder-by-zero": ".cfa: $rsp 8 + .ra: .cfa 0 % ^",
    "stack-underflow": ".cfa: + .ra: ^",
    "bad-alignment": ".cfa: $rsp 3 @ .ra: .cfa -8 + ^",
    "undefined": ".cfa: $rsp 8 + .ra: .undef",
    "unknown-register": ".cfa: $nosuch 8 + .ra: .cfa -8 + ^",
    "sp-never-grows": ".cfa: $rsp .ra: .cfa ^",
    "read-everywhere": ".cfa: $rsp 8 + .ra: 0 ^ ^ ^",
    "overflowing-literal": ".cfa: $rsp 99999999999999999999999 + .ra: .cfa -8 + ^",
    "300k-tokens": ".cfa: $rsp " + "1 + " * 150_000 + ".ra: .cfa -8 + ^",
    "deep-stack": ".cfa: " + "1 " * 5000 + " .ra: .cfa -8 + ^",
    "empty-rule": ".cfa: .ra: .cfa -8 + ^",
    "no-rules": "",
}
HOSTILE_WIN = {
    "division-by-zero": "$T0 $esp 0 / = $eip $T0 ^ = $esp $T0 4 + =",
    "stack-underflow": "= = ^ +",
    "assign-to-number": "1 2 = $eip $esp ^ =",
    "undefined-variable": "$eip $nosuch ^ = $esp $nosuch 4 + =",
    "300k-tokens": "$T0 $esp " + "4 + " * 150_000 + "= $eip $T0 ^ = $esp $T0 4 + =",
    "deep-stack": "1 " * 5000,
    "sp-never-grows": "$eip $esp ^ = $esp $esp =",
}


def _replace_line(
    text: bytes, prefix: bytes, replacement: bytes, *, nth: int = 0
) -> tuple[bytes, int, int] | None:
    """`text` with its `nth` line starting with `prefix` replaced; (new text, damaged start, end)."""
    seen = 0
    for start, end, line in _sym_records(text):
        if line.startswith(prefix):
            if seen == nth:
                new = text[:start] + replacement + b"\n" + text[end:]
                return new, start, end
            seen += 1
    return None


def symbol_variants(seeds: Iterable[DumpSeed]) -> list[SymVariant]:
    """Damaged copies of the seeds' own `.sym` files (each replaces the original in a copied store)."""
    variants: list[SymVariant] = []
    for seed in seeds:
        syms = sorted(
            p for root in seed.symbol_paths for p in root.glob("*/*/*.sym") if p.stat().st_size < 400_000
        )
        if seed.name not in ("sample", "fp_less_deep", "synth-windows-x86", "synth-windows-amd64"):
            continue
        for path in syms:
            root = next(r for r in seed.symbol_paths if path.is_relative_to(r))
            target = path.relative_to(root)
            original = path.read_bytes()
            label = f"{seed.name}/{target.parts[0]}"
            variants.extend(_sym_family(seed, target, label, original))
    return variants


def _sym_family(seed: DumpSeed, target: Path, label: str, original: bytes) -> Iterator[SymVariant]:
    size = len(original)

    def v(
        family: str, what: str, data: bytes, start: int, end: int, *, detectable: bool = True
    ) -> SymVariant:
        return SymVariant(
            f"{label}/{family}/{what}",
            family,
            seed,
            target,
            data,
            _intact_functions(original, start, end),
            detectable,
        )

    rng = random.Random(f"sym/{label}")
    yield v("garbage", "random-bytes", rng.randbytes(2048), 0, INF)
    yield v("garbage", "nul-bytes", bytes(4096), 0, INF)
    yield v(
        "garbage",
        "binary-after-module-line",
        original.split(b"\n", 1)[0] + b"\n" + rng.randbytes(4096),
        0,
        INF,
    )
    yield v("garbage", "empty", b"", 0, INF, detectable=False)
    lines = _sym_records(original)
    for fraction in (0.0, 0.1, 0.37, 0.5, 0.83, 0.99):
        at = int(size * fraction)
        yield v("truncated", f"{int(fraction * 100)}%", original[:at], max(0, at - 1), INF, detectable=at > 0)
    if len(lines) > 3:
        mid = lines[len(lines) // 2]
        yield v("truncated", "mid-line", original[: mid[0] + max(1, len(mid[2]) // 2)], mid[0], INF)
    malformed = {
        b"MODULE": b"MODULE Linux",
        b"FILE": b"FILE notanumber name",
        b"FUNC": b"FUNC zz 10 0 broken",
        b"PUBLIC": b"PUBLIC 12345678901234567 0 too_many_digits",
        b"STACK CFI INIT": b"STACK CFI INIT 10",
        b"STACK CFI ": b"STACK CFI nothex .cfa: $rsp 8 +",
        b"STACK WIN": b"STACK WIN 4 1000 10 0 0 0 0 0 0",
        b"INLINE_ORIGIN": b"INLINE_ORIGIN x",
        b"INLINE ": b"INLINE 0 x 0 0 10",
        b"INFO": b"INFO",
    }
    for prefix, bad in malformed.items():
        replaced = _replace_line(original, prefix, bad)
        if replaced is not None:
            yield v(
                "malformed",
                prefix.decode().strip().replace(" ", "-"),
                *replaced,
                detectable=prefix != b"INFO",
            )
    for start, end, line in lines:
        if line and line[:1] in b"0123456789abcdef":
            yield v(
                "malformed", "line-record", original[:start] + b"1 2 three 4\n" + original[end:], start, end
            )
            break
    overflow = {
        "func-address-17-digits": b"FUNC 10000000000000000 10 0 too_far",
        "func-end-overflows": b"FUNC ffffffffffffff00 1000 0 wraps",
        "public-max-address": b"PUBLIC ffffffffffffffff 0 at_the_end",
        "cfi-end-overflows": b"STACK CFI INIT fffffffffffffff0 100 .cfa: $rsp 8 + .ra: .cfa -8 + ^",
        "win-end-overflows": b"STACK WIN 4 fffffffffffffff0 100 0 0 0 0 0 0 1 $eip 0 =",
        "line-end-overflows": b"FUNC fffffffffffffff0 f 0 last\nfffffffffffffff8 100 1 0",
        "size-9-digits": b"FUNC 1000 100000000 0 too_big",
        "line-number-11-digits": b"FUNC 5000 10 0 f\n5000 10 99999999999 0",
    }
    # valid at the very top of the address space / dropped silently as rust-minidump does
    silent = {"public-max-address", "line-end-overflows"}
    for what, line in overflow.items():
        yield v("overflow", what, original + line + b"\n", size, INF, detectable=what not in silent)
    huge = b"x" * (3 * 1024 * 1024)
    yield v("long-line", "3MB-garbage-line", original + huge + b"\n", size, INF)
    yield v(
        "long-line",
        "3MB-function-name",
        original + b"FUNC 7fff0000 10 0 " + huge + b"\n",
        size,
        INF,
        detectable=False,
    )
    yield v("long-line", "3MB-no-newline", original + huge, size, INF)
    # hostile programs on the records the walk uses: every INIT / WIN record gets the program
    for what, rules in HOSTILE_CFI.items():
        data = _rewrite_all(
            original, b"STACK CFI INIT ", lambda line, rules=rules: _with_rules(line, 3, rules)
        )
        if data != original:
            yield v("hostile-cfi", what, data, 0, INF, detectable=False)
    for what, program in HOSTILE_WIN.items():
        data = _rewrite_all(
            original, b"STACK WIN 4 ", lambda line, program=program: _with_rules(line, 11, program)
        )
        if data != original:
            yield v("hostile-win", what, data, 0, INF, detectable=False)


def _with_rules(line: bytes, fields: int, rules: str) -> bytes:
    head = line.split(b" ")[: fields + (1 if line.startswith(b"STACK CFI INIT") else 0) + 1]
    return b" ".join(head) + b" " + rules.encode()


def _rewrite_all(text: bytes, prefix: bytes, rewrite: Callable[[bytes], bytes]) -> bytes:
    out = []
    for line in text.split(b"\n"):
        out.append(rewrite(line) if line.startswith(prefix) else line)
    return b"\n".join(out)


__all__ = [
    "Damage",
    "DumpLayout",
    "DumpSeed",
    "DumpVariant",
    "InputKind",
    "Span",
    "Survivors",
    "SymVariant",
    "dump_seeds",
    "dump_variants",
    "survivors",
    "symbol_variants",
    "synthetic_dump_bytes",
]
