"""A fluent builder of synthetic minidumps for tests.

    dump = (
        SynthMinidump(cpu=Cpu.AMD64, os=Os.LINUX)
        .add_thread(0x1234, context=SynthContext.amd64(rip=0x401000, rsp=0x7FFF0000), stack=(0x7FFF0000, b))
        .add_module(0x400000, 0x10000, "/usr/bin/app", build_id=bytes(range(20)))
        .add_exception(0x1234, code=11, flags=1, address=0)
        .to_minidump()
    )

`finish()` lays the file out (header, directory, stream bodies, then strings,
CodeView records, contexts and memory) and returns its bytes; the directory
and every list entry are created from the `add_*` calls. A SystemInfo stream
for `cpu`/`os` is added unless one was added explicitly or `system_info=False`.
Thread stacks also go into the MemoryList (as real writers do) unless
`stack_in_memory_list=False`. After `finish()`, `stream_locations` maps each
stream type to its (rva, size) so tests can damage bytes on purpose.

The CPU context layouts here are written out independently of the reader
(`inspector.core.minidump.context`), from the Windows / Breakpad headers, so
the reader's offsets are checked against a second source.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from inspector.core.minidump import Minidump
from inspector.core.minidump.format import StreamType
from inspector.core.types import Cpu, Os
from tests.synth.section import Endian, Label, Section

# ---- CPU contexts ---------------------------------------------------------------------------------

#: layout -> (total size, context_flags width, default flags, {register: (offset, width)})
_LayoutSpec = tuple[int, int, int, dict[str, tuple[int, int]]]


def _x86_layout() -> _LayoutSpec:
    regs = {f"dr{n}": (4 + 4 * i, 4) for i, n in enumerate((0, 1, 2, 3, 6, 7))}
    names = (
        "gs",
        "fs",
        "es",
        "ds",
        "edi",
        "esi",
        "ebx",
        "edx",
        "ecx",
        "eax",
        "ebp",
        "eip",
        "cs",
        "eflags",
        "esp",
        "ss",
    )
    regs.update({name: (140 + 4 * i, 4) for i, name in enumerate(names)})
    return 716, 4, 0x0001003F, regs


def _amd64_layout() -> _LayoutSpec:
    regs = {"mx_csr": (0x34, 4), "eflags": (0x44, 4)}
    regs.update({seg: (0x38 + 2 * i, 2) for i, seg in enumerate(("cs", "ds", "es", "fs", "gs", "ss"))})
    gprs = ("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", *(f"r{i}" for i in range(8, 16)), "rip")
    regs.update({name: (0x78 + 8 * i, 8) for i, name in enumerate(gprs)})
    return 1232, 4, 0x0010001F, regs


def _arm_layout() -> _LayoutSpec:
    regs = {f"r{i}": (4 + 4 * i, 4) for i in range(16)}
    regs.update({"fp": regs["r11"], "sp": regs["r13"], "lr": regs["r14"], "pc": regs["r15"], "cpsr": (68, 4)})
    return 368, 4, 0x40000006, regs


def _arm64_layout() -> _LayoutSpec:
    regs = {f"x{i}": (8 + 8 * i, 8) for i in range(31)}
    regs.update({"fp": regs["x29"], "lr": regs["x30"], "sp": (256, 8), "pc": (264, 8), "cpsr": (4, 4)})
    return 912, 4, 0x00400007, regs


def _arm64_old_layout() -> _LayoutSpec:
    regs = {f"x{i}": (8 + 8 * i, 8) for i in range(31)}
    regs.update({"fp": regs["x29"], "lr": regs["x30"], "sp": (256, 8), "pc": (264, 8), "cpsr": (272, 4)})
    return 796, 8, 0x80000003, regs


_MIPS_NAMES = (
    "zero", "at", "v0", "v1", "a0", "a1", "a2", "a3", "t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7",
    "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "t8", "t9", "k0", "k1", "gp", "sp", "fp", "ra",
)  # fmt: skip


def _mips_layout(flags: int) -> _LayoutSpec:
    regs = {name: (8 + 8 * i, 8) for i, name in enumerate(_MIPS_NAMES)}
    regs["pc"] = (8 + 256 + 16 + 24 + 8, 8)  # epc after iregs, mdhi/mdlo, hi[3]/lo[3], dsp_control+pad
    return 600, 4, flags, regs


def _ppc_layout() -> _LayoutSpec:
    regs = {"srr0": (4, 4), "srr1": (8, 4)}
    regs.update({f"r{i}": (12 + 4 * i, 4) for i in range(32)})
    regs.update({name: (140 + 4 * i, 4) for i, name in enumerate(("cr", "xer", "lr", "ctr", "mq", "vrsave"))})
    return 1004, 4, 0x20000001, regs


def _ppc64_layout() -> _LayoutSpec:
    regs = {"srr0": (8, 8), "srr1": (16, 8)}
    regs.update({f"r{i}": (24 + 8 * i, 8) for i in range(32)})
    regs.update({name: (280 + 8 * i, 8) for i, name in enumerate(("cr", "xer", "lr", "ctr", "vrsave"))})
    return 1160, 8, 0x01000001, regs


def _sparc_layout() -> _LayoutSpec:
    regs = {f"g_r{i}": (8 + 8 * i, 8) for i in range(32)}
    regs.update({name: (264 + 8 * i, 8) for i, name in enumerate(("ccr", "pc", "npc", "y", "asi", "fprs"))})
    return 584, 4, 0x10000001, regs


_LAYOUTS: dict[str, Callable[[], _LayoutSpec]] = {
    "x86": _x86_layout,
    "amd64": _amd64_layout,
    "arm": _arm_layout,
    "arm64": _arm64_layout,
    "arm64_old": _arm64_old_layout,
    "mips": lambda: _mips_layout(0x00040003),
    "mips64": lambda: _mips_layout(0x00080003),
    "ppc": _ppc_layout,
    "ppc64": _ppc64_layout,
    "sparc": _sparc_layout,
}


@dataclass
class SynthContext:
    """Register values for one CPU context; unnamed registers are 0. `to_bytes` lays it out."""

    layout: str
    registers: dict[str, int] = field(default_factory=dict)
    context_flags: int | None = None

    @classmethod
    def x86(cls, *, context_flags: int | None = None, **registers: int) -> SynthContext:
        return cls("x86", registers, context_flags)

    @classmethod
    def amd64(cls, *, context_flags: int | None = None, **registers: int) -> SynthContext:
        return cls("amd64", registers, context_flags)

    @classmethod
    def arm(cls, *, context_flags: int | None = None, **registers: int) -> SynthContext:
        return cls("arm", registers, context_flags)

    @classmethod
    def arm64(cls, *, context_flags: int | None = None, **registers: int) -> SynthContext:
        """The current (Microsoft / Crashpad) ARM64 layout."""
        return cls("arm64", registers, context_flags)

    @classmethod
    def arm64_old(cls, *, context_flags: int | None = None, **registers: int) -> SynthContext:
        """Breakpad's old ARM64 layout (64-bit context_flags, used with processor architecture 0x8003)."""
        return cls("arm64_old", registers, context_flags)

    @classmethod
    def mips(cls, *, context_flags: int | None = None, **registers: int) -> SynthContext:
        return cls("mips", registers, context_flags)

    @classmethod
    def mips64(cls, *, context_flags: int | None = None, **registers: int) -> SynthContext:
        return cls("mips64", registers, context_flags)

    @classmethod
    def ppc(cls, *, context_flags: int | None = None, **registers: int) -> SynthContext:
        return cls("ppc", registers, context_flags)

    @classmethod
    def ppc64(cls, *, context_flags: int | None = None, **registers: int) -> SynthContext:
        return cls("ppc64", registers, context_flags)

    @classmethod
    def sparc(cls, *, context_flags: int | None = None, **registers: int) -> SynthContext:
        return cls("sparc", registers, context_flags)

    @classmethod
    def for_cpu(cls, cpu: Cpu, **registers: int) -> SynthContext:
        return cls(_CPU_LAYOUT[cpu], registers)

    def to_bytes(self, endian: Endian = "little") -> bytes:
        size, flags_width, default_flags, offsets = _LAYOUTS[self.layout]()
        out = bytearray(size)
        flags = default_flags if self.context_flags is None else self.context_flags
        flags_at = 0x30 if self.layout == "amd64" else 0  # CONTEXT_AMD64 starts with the P1Home..P6Home slots
        out[flags_at : flags_at + flags_width] = flags.to_bytes(flags_width, endian)
        for name, value in self.registers.items():
            if name not in offsets:
                raise KeyError(f"{self.layout} context has no register {name!r}")
            offset, width = offsets[name]
            out[offset : offset + width] = (value & ((1 << (8 * width)) - 1)).to_bytes(width, endian)
        return bytes(out)


_CPU_LAYOUT = {
    Cpu.X86: "x86",
    Cpu.AMD64: "amd64",
    Cpu.ARM: "arm",
    Cpu.ARM64: "arm64",
    Cpu.MIPS: "mips",
    Cpu.MIPS64: "mips64",
    Cpu.PPC: "ppc",
    Cpu.PPC64: "ppc64",
    Cpu.SPARC: "sparc",
}

PROCESSOR_ARCHITECTURE = {
    Cpu.X86: 0,
    Cpu.MIPS: 1,
    Cpu.PPC: 3,
    Cpu.ARM: 5,
    Cpu.AMD64: 9,
    Cpu.ARM64: 12,
    Cpu.SPARC: 0x8001,
    Cpu.PPC64: 0x8002,
    Cpu.MIPS64: 0x8004,
    Cpu.UNKNOWN: 0xFFFF,
}
ARM64_OLD_ARCHITECTURE = 0x8003

PLATFORM_ID = {
    Os.WINDOWS: 2,
    Os.MACOS: 0x8101,
    Os.IOS: 0x8102,
    Os.LINUX: 0x8201,
    Os.SOLARIS: 0x8202,
    Os.ANDROID: 0x8203,
    Os.PS3: 0x8204,
    Os.NACL: 0x8205,
    Os.FUCHSIA: 0x8206,
    Os.UNKNOWN: 0xFFFF,
}


def guid_bytes(text: str, endian: Endian = "little") -> bytes:
    """16 bytes of a GUID given as 32 hex digits (data1 data2 data3 data4, as Breakpad prints it)."""
    hexes = text.replace("-", "")[:32]
    return (
        int(hexes[0:8], 16).to_bytes(4, endian)
        + int(hexes[8:12], 16).to_bytes(2, endian)
        + int(hexes[12:16], 16).to_bytes(2, endian)
        + bytes.fromhex(hexes[16:32])
    )


# ---- the builder ------------------------------------------------------------------------------------

Data = bytes | bytearray | Section


@dataclass
class _Thread:
    thread_id: int
    context: SynthContext | bytes | None
    stack_base: int
    stack: Data | None
    suspend_count: int
    priority_class: int
    priority: int
    teb: int


@dataclass
class _Module:
    base: int
    size: int
    name: str
    codeview: bytes | None
    time_date_stamp: int
    checksum: int
    version: tuple[int, int, int, int] | None
    name_rva: int | None


class SynthMinidump:
    """Build a minidump; every `add_*` returns the builder so calls chain."""

    def __init__(
        self,
        cpu: Cpu = Cpu.AMD64,
        os: Os = Os.LINUX,
        *,
        endian: Endian = "little",
        time_date_stamp: int = 0x5F5E1000,
        flags: int = 0,
        version: int = 0xA793,
        system_info: bool = True,
        stack_in_memory_list: bool = True,
    ) -> None:
        self.cpu = cpu
        self.os = os
        self.endian: Endian = endian
        self.time_date_stamp = time_date_stamp
        self.flags = flags
        self.version = version
        self.auto_system_info = system_info
        self.stack_in_memory_list = stack_in_memory_list
        self._order: list[int] = []  # stream types in directory order
        self._threads: list[_Thread] = []
        self._modules: list[_Module] = []
        self._unloaded: list[tuple[int, int, str, int, int]] = []
        self._memory: list[tuple[int, Data]] = []
        self._memory64: list[tuple[int, Data]] = []
        self._builders: dict[int, Callable[[], Section]] = {}
        self._raw: list[tuple[int, Data]] = []
        self._aux: list[tuple[Label, Data, int]] = []
        self._placed: dict[int, Label] = {}
        #: stream type -> (rva, size), filled by `finish`.
        self.stream_locations: dict[int, tuple[int, int]] = {}

    # -- small helpers --

    def _section(self) -> Section:
        return Section(self.endian)

    def _use(self, stream_type: int) -> None:
        if stream_type not in self._order:
            self._order.append(stream_type)

    def _blob(self, data: Data, align: int = 4) -> Label:
        """Place `data` after the streams (once per object); the label is its file offset."""
        key = id(data)
        if key in self._placed:
            return self._placed[key]
        label = Label(name="blob")
        self._aux.append((label, data, align))
        self._placed[key] = label
        return label

    def _string(self, text: str) -> Label:
        """A MINIDUMP_STRING (u32 byte length, UTF-16, NUL)."""
        encoded = text.encode("utf-16-le" if self.endian == "little" else "utf-16-be")
        return self._blob(self._section().d32(len(encoded)).append(encoded).d16(0))

    def _utf8(self, text: str | bytes, *, terminated: bool = True) -> Label:
        """A MINIDUMP_UTF8_STRING (u32 length, bytes, NUL)."""
        raw = text.encode() if isinstance(text, str) else text
        s = self._section().d32(len(raw)).append(raw)
        if terminated:
            s.d8(0)
        return self._blob(s)

    def _location(self, s: Section, data: Data | None) -> None:
        """A MINIDUMP_LOCATION_DESCRIPTOR for `data` placed after the streams (0, 0 for None)."""
        if data is None:
            s.d32(0).d32(0)
            return
        s.d32(len(data)).d32(self._blob(data))

    # -- threads, modules, memory --

    def add_thread(
        self,
        thread_id: int,
        *,
        context: SynthContext | bytes | None = None,
        stack: Section | tuple[int, Data] | None = None,
        suspend_count: int = 0,
        priority_class: int = 0,
        priority: int = 0,
        teb: int = 0,
    ) -> SynthMinidump:
        """A thread; `stack` is a Section (its `start` is the stack base) or (base, bytes)."""
        if isinstance(stack, Section):
            base, data = stack.start, stack
        elif stack is None:
            base, data = 0, None
        else:
            base, data = stack
        self._threads.append(
            _Thread(thread_id, context, base, data, suspend_count, priority_class, priority, teb)
        )
        self._use(StreamType.ThreadListStream)
        if data is not None and self.stack_in_memory_list:
            self._memory.append((base, data))
            self._use(StreamType.MemoryListStream)
        return self

    def add_module(
        self,
        base: int,
        size: int,
        name: str,
        *,
        debug_id: str | None = None,
        debug_file: str | None = None,
        build_id: bytes | None = None,
        pdb20: tuple[int, int] | None = None,
        codeview: bytes | None = None,
        time_date_stamp: int = 0,
        checksum: int = 0,
        version: tuple[int, int, int, int] | None = None,
        name_rva: int | None = None,
    ) -> SynthMinidump:
        """A loaded module with a CodeView record.

        `debug_id` (Breakpad form: 32 hex GUID digits + age) makes a PDB 7.0
        record naming `debug_file` (default: the code file's basename);
        `build_id` an ELF build-id record; `pdb20=(signature, age)` a PDB 2.0
        record; `codeview` raw record bytes. `version=(a, b, c, d)` fills
        VS_FIXEDFILEINFO. `name_rva` overrides where the name is said to be.
        """
        leaf = name.replace("\\", "/").rsplit("/", 1)[-1]
        cv: bytes | None = codeview
        if debug_id is not None:
            age = int(debug_id[32:] or "0", 16)
            file_name = (debug_file if debug_file is not None else leaf).encode() + b"\0"
            cv = (
                (0x53445352).to_bytes(4, self.endian)  # "RSDS"
                + guid_bytes(debug_id, self.endian)
                + age.to_bytes(4, self.endian)
                + file_name
            )
        elif build_id is not None:
            cv = (0x4270454C).to_bytes(4, self.endian) + build_id
        elif pdb20 is not None:
            file_name = (debug_file if debug_file is not None else leaf).encode() + b"\0"
            cv = (
                (0x3031424E).to_bytes(4, self.endian)
                + bytes(4)
                + pdb20[0].to_bytes(4, self.endian)
                + pdb20[1].to_bytes(4, self.endian)
                + file_name
            )
        self._modules.append(_Module(base, size, name, cv, time_date_stamp, checksum, version, name_rva))
        self._use(StreamType.ModuleListStream)
        return self

    def add_unloaded_module(
        self, base: int, size: int, name: str, *, time_date_stamp: int = 0, checksum: int = 0
    ) -> SynthMinidump:
        self._unloaded.append((base, size, name, time_date_stamp, checksum))
        self._use(StreamType.UnloadedModuleListStream)
        return self

    def add_memory(self, base: int | Section, data: Data | None = None) -> SynthMinidump:
        """A MemoryList region: `add_memory(base, bytes)` or `add_memory(section)` (base = its start)."""
        if isinstance(base, Section):
            base, data = base.start, base
        assert data is not None
        self._memory.append((base, data))
        self._use(StreamType.MemoryListStream)
        return self

    def add_memory64(self, base: int | Section, data: Data | None = None) -> SynthMinidump:
        """A Memory64List region (full-memory dumps)."""
        if isinstance(base, Section):
            base, data = base.start, base
        assert data is not None
        self._memory64.append((base, data))
        self._use(StreamType.Memory64ListStream)
        return self

    # -- single-record streams --

    def _single(self, stream_type: int, build: Callable[[], Section]) -> SynthMinidump:
        self._builders[stream_type] = build
        self._use(stream_type)
        return self

    def add_system_info(
        self,
        cpu: Cpu | None = None,
        os: Os | None = None,
        *,
        processor_architecture: int | None = None,
        platform_id: int | None = None,
        processor_level: int = 6,
        processor_revision: int = 0x4501,
        number_of_processors: int = 4,
        product_type: int = 1,
        major_version: int = 0,
        minor_version: int = 0,
        build_number: int = 0,
        csd_version: str | None = "",
        suite_mask: int = 0,
        cpu_vendor: str = "GenuineIntel",
        cpu_data: bytes | None = None,
    ) -> SynthMinidump:
        """SystemInfo; the CPU / OS default to the builder's. `csd_version=None` writes RVA 0."""
        cpu = cpu or self.cpu
        os = os or self.os
        arch = PROCESSOR_ARCHITECTURE[cpu] if processor_architecture is None else processor_architecture
        platform = PLATFORM_ID[os] if platform_id is None else platform_id
        if cpu_data is None:
            cpu_data = (
                cpu_vendor.encode("latin-1")[:12].ljust(12, b"\0") + bytes(12)
                if cpu is Cpu.X86
                else bytes(24)
            )

        def build() -> Section:
            s = self._section()
            s.d16(arch).d16(processor_level).d16(processor_revision).d8(number_of_processors).d8(product_type)
            s.d32(major_version).d32(minor_version).d32(build_number).d32(platform)
            s.d32(self._string(csd_version) if csd_version is not None else 0)
            s.d16(suite_mask).d16(0).append(cpu_data.ljust(24, b"\0")[:24])
            return s

        self.auto_system_info = False
        return self._single(StreamType.SystemInfoStream, build)

    def add_exception(
        self,
        thread_id: int,
        code: int,
        *,
        flags: int = 0,
        address: int = 0,
        parameters: Sequence[int] = (),
        number_parameters: int | None = None,
        context: SynthContext | bytes | None = None,
        record: int = 0,
    ) -> SynthMinidump:
        """The exception stream; `parameters` fill exception_information (count unless overridden)."""
        params = list(parameters)[:15] + [0] * (15 - min(15, len(parameters)))

        def build() -> Section:
            s = self._section().d32(thread_id).d32(0)
            s.d32(code).d32(flags).d64(record).d64(address)
            s.d32(len(parameters) if number_parameters is None else number_parameters).d32(0)
            for p in params:
                s.d64(p)
            self._location(s, self._context_bytes(context) if context is not None else None)
            return s

        return self._single(StreamType.ExceptionStream, build)

    def add_misc_info(
        self,
        *,
        process_id: int | None = None,
        process_create_time: int | None = None,
        process_user_time: int = 0,
        process_kernel_time: int = 0,
        version: int = 1,
        flags1: int | None = None,
        extra: bytes = b"",
    ) -> SynthMinidump:
        """MiscInfo of `version` 1–5 (its size picks the version); flags follow the given fields."""
        size = {1: 24, 2: 44, 3: 232, 4: 832, 5: 1364}[version]
        if flags1 is None:
            flags1 = (1 if process_id is not None else 0) | (2 if process_create_time is not None else 0)

        def build() -> Section:
            s = self._section().d32(size).d32(flags1)
            s.d32(process_id or 0).d32(process_create_time or 0).d32(process_user_time).d32(
                process_kernel_time
            )
            body = extra.ljust(size - 24, b"\0")[: size - 24]
            return s.append(body)

        return self._single(StreamType.MiscInfoStream, build)

    def add_thread_names(self, names: Mapping[int, str]) -> SynthMinidump:
        def build() -> Section:
            s = self._section().d32(len(names))
            for tid, name in names.items():
                s.d32(tid).d64(self._string(name))
            return s

        return self._single(StreamType.ThreadNamesStream, build)

    def add_thread_info(self, entries: Sequence[Mapping[str, int]]) -> SynthMinidump:
        """ThreadInfoList entries given as dicts of MINIDUMP_THREAD_INFO field names."""
        fields = (
            ("thread_id", 4),
            ("dump_flags", 4),
            ("dump_error", 4),
            ("exit_status", 4),
            ("create_time", 8),
            ("exit_time", 8),
            ("kernel_time", 8),
            ("user_time", 8),
            ("start_address", 8),
            ("affinity", 8),
        )

        def build() -> Section:
            s = self._section().d32(12).d32(64).d32(len(entries))
            for entry in entries:
                for name, width in fields:
                    s.dword(width, entry.get(name, 0))
            return s

        return self._single(StreamType.ThreadInfoListStream, build)

    def add_memory_info(self, entries: Sequence[tuple[int, int, int, int, int]]) -> SynthMinidump:
        """MemoryInfoList entries as (base, size, state, protection, type)."""

        def build() -> Section:
            s = self._section().d32(16).d32(48).d64(len(entries))
            for base, size, state, protection, kind in entries:
                s.d64(base).d64(base).d32(protection).d32(0).d64(size).d32(state).d32(protection).d32(
                    kind
                ).d32(0)
            return s

        return self._single(StreamType.MemoryInfoListStream, build)

    def add_breakpad_info(
        self, *, dump_thread_id: int | None = None, requesting_thread_id: int | None = None
    ) -> SynthMinidump:
        validity = (1 if dump_thread_id is not None else 0) | (2 if requesting_thread_id is not None else 0)
        return self._single(
            StreamType.BreakpadInfoStream,
            lambda: self._section().d32(validity).d32(dump_thread_id or 0).d32(requesting_thread_id or 0),
        )

    def add_assertion(
        self, *, expression: str = "", function: str = "", file: str = "", line: int = 0, kind: int = 1
    ) -> SynthMinidump:
        def build() -> Section:
            s = self._section()
            for text in (expression, function, file):
                s.append(text.encode("utf-16-le")[:254].ljust(256, b"\0"))
            return s.d32(line).d32(kind)

        return self._single(StreamType.AssertionInfoStream, build)

    def add_crashpad_info(
        self,
        *,
        simple_annotations: Mapping[str, str] | None = None,
        modules: Mapping[int, Mapping[str, object]] | None = None,
        version: int = 1,
        report_id: str = "00112233445566778899aabbccddeeff",
        client_id: str = "ffeeddccbbaa99887766554433221100",
    ) -> SynthMinidump:
        """CrashpadInfo. `modules` maps a module-list index to a dict with optional keys
        `list_annotations` (list of str), `simple_annotations` (dict) and
        `annotation_objects` (dict name -> str value, or (type, bytes) for other types)."""

        def dictionary(values: Mapping[str, str] | None) -> Section | None:
            if not values:
                return None
            s = self._section().d32(len(values))
            for key, value in values.items():
                s.d32(self._utf8(key)).d32(self._utf8(value))
            return s

        def build() -> Section:
            s = self._section().d32(version).append(guid_bytes(report_id, self.endian))
            s.append(guid_bytes(client_id, self.endian))
            self._location(s, dictionary(simple_annotations))
            if modules:
                links = self._section().d32(len(modules))
                for index, spec in modules.items():
                    info = self._section().d32(1)
                    lists = spec.get("list_annotations") or []
                    assert isinstance(lists, list)
                    list_section = None
                    if lists:
                        list_section = self._section().d32(len(lists))
                        for text in lists:
                            list_section.d32(self._utf8(text))
                    self._location(info, list_section)
                    simple = spec.get("simple_annotations")
                    assert simple is None or isinstance(simple, dict)
                    self._location(info, dictionary(simple))
                    objects = spec.get("annotation_objects") or {}
                    assert isinstance(objects, dict)
                    object_section = None
                    if objects:
                        object_section = self._section().d32(len(objects))
                        for name, value in objects.items():
                            kind, raw = (1, value.encode()) if isinstance(value, str) else value
                            object_section.d32(self._utf8(name)).d16(kind).d16(0)
                            object_section.d32(self._utf8(raw, terminated=False))
                    self._location(info, object_section)
                    links.d32(index)
                    self._location(links, info)
                self._location(s, links)
            else:
                s.d32(0).d32(0)
            return s

        return self._single(StreamType.CrashpadInfoStream, build)

    def add_handle_data(self, handles: Sequence[tuple[int, str | None, str | None]]) -> SynthMinidump:
        """HandleData (version-1 descriptors) from (handle, type name, object name)."""

        def build() -> Section:
            s = self._section().d32(16).d32(32).d32(len(handles)).d32(0)
            for handle, type_name, object_name in handles:
                s.d64(handle)
                s.d32(self._string(type_name) if type_name is not None else 0)
                s.d32(self._string(object_name) if object_name is not None else 0)
                s.d32(0).d32(0).d32(1).d32(1)
            return s

        return self._single(StreamType.HandleDataStream, build)

    def add_text_stream(self, stream_type: int, text: str | bytes) -> SynthMinidump:
        """A Linux /proc copy or other text stream (LinuxCpuInfo, LinuxMaps, MozSoftErrors …)."""
        raw = text.encode() if isinstance(text, str) else text
        return self._single(stream_type, lambda: self._section().append(raw))

    def add_linux_cpu_info(self, text: str | bytes) -> SynthMinidump:
        return self.add_text_stream(StreamType.LinuxCpuInfo, text)

    def add_linux_proc_status(self, text: str | bytes) -> SynthMinidump:
        return self.add_text_stream(StreamType.LinuxProcStatus, text)

    def add_linux_lsb_release(self, text: str | bytes) -> SynthMinidump:
        return self.add_text_stream(StreamType.LinuxLsbRelease, text)

    def add_linux_maps(self, text: str | bytes) -> SynthMinidump:
        return self.add_text_stream(StreamType.LinuxMaps, text)

    def add_linux_cmd_line(self, text: str | bytes) -> SynthMinidump:
        return self.add_text_stream(StreamType.LinuxCmdLine, text)

    def add_linux_environ(self, text: str | bytes) -> SynthMinidump:
        return self.add_text_stream(StreamType.LinuxEnviron, text)

    def add_stream(self, stream_type: int, data: Data) -> SynthMinidump:
        """An arbitrary stream with exactly these bytes (repeat a type to make duplicates)."""
        self._raw.append((stream_type, data))
        return self

    # -- assembling --

    def _context_bytes(self, context: SynthContext | bytes) -> bytes:
        return context if isinstance(context, bytes) else context.to_bytes(self.endian)

    def _thread_list(self) -> Section:
        s = self._section().d32(len(self._threads))
        for t in self._threads:
            s.d32(t.thread_id).d32(t.suspend_count).d32(t.priority_class).d32(t.priority).d64(t.teb)
            s.d64(t.stack_base)
            self._location(s, t.stack)
            self._location(s, self._context_bytes(t.context) if t.context is not None else None)
        return s

    def _module_list(self) -> Section:
        s = self._section().d32(len(self._modules))
        for m in self._modules:
            s.d64(m.base).d32(m.size).d32(m.checksum).d32(m.time_date_stamp)
            s.d32(m.name_rva if m.name_rva is not None else self._string(m.name))
            if m.version is None:
                s.append(bytes(52))
            else:
                a, b, c, d = m.version
                s.d32(0xFEEF04BD).d32(0x00010000).d32((a << 16) | b).d32((c << 16) | d)
                s.d32((a << 16) | b).d32((c << 16) | d).append(bytes(28))
            self._location(s, m.codeview)
            s.d32(0).d32(0).append(bytes(16))
        return s

    def _unloaded_list(self) -> Section:
        s = self._section().d32(12).d32(24).d32(len(self._unloaded))
        for base, size, name, stamp, checksum in self._unloaded:
            s.d64(base).d32(size).d32(checksum).d32(stamp).d32(self._string(name))
        return s

    def _memory_list(self) -> Section:
        s = self._section().d32(len(self._memory))
        for base, data in self._memory:
            s.d64(base)
            self._location(s, data)
        return s

    def finish(self) -> bytes:
        """The minidump file's bytes."""
        if self.auto_system_info and StreamType.SystemInfoStream not in self._builders:
            self.add_system_info()
            self._order.remove(StreamType.SystemInfoStream)
            self._order.insert(0, StreamType.SystemInfoStream)
        self._aux = []
        self._placed = {}
        memory64_base = Label(name="memory64 data")
        bodies: list[tuple[int, Section]] = []
        for stream_type in self._order:
            if stream_type == StreamType.ThreadListStream:
                body = self._thread_list()
            elif stream_type == StreamType.ModuleListStream:
                body = self._module_list()
            elif stream_type == StreamType.UnloadedModuleListStream:
                body = self._unloaded_list()
            elif stream_type == StreamType.MemoryListStream:
                body = self._memory_list()
            elif stream_type == StreamType.Memory64ListStream:
                body = self._section().d64(len(self._memory64)).d64(memory64_base)
                for base, data in self._memory64:
                    body.d64(base).d64(len(data))
            else:
                body = self._builders[stream_type]()
            bodies.append((stream_type, body))
        for stream_type, data in self._raw:
            body = data if isinstance(data, Section) else self._section().append(data)
            bodies.append((stream_type, body))

        f = self._section()
        directory = Label(name="directory")
        f.d32(0x504D444D).d32(self.version).d32(len(bodies)).d32(directory).d32(0).d32(self.time_date_stamp)
        f.d64(self.flags)
        f.mark(directory)
        rvas = [Label(name=f"stream {t:#x}") for t, _ in bodies]
        for (stream_type, body), rva in zip(bodies, rvas, strict=True):
            f.d32(stream_type).d32(len(body)).d32(rva)
        for (stream_type, body), rva in zip(bodies, rvas, strict=True):
            f.align(8).mark(rva).append(body)
            self.stream_locations[stream_type] = (rva.value, len(body))
        for label, data, align in self._aux:
            f.align(align).mark(label).append(data)
        f.align(8).mark(memory64_base)
        for _, data in self._memory64:
            f.append(data)
        return f.finish()

    def to_minidump(self) -> Minidump:
        """`Minidump.from_bytes(self.finish())`."""
        return Minidump.from_bytes(self.finish())
