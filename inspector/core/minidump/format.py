"""Constants of the minidump format: signatures, stream types, CPU and OS ids, context flags.

Values are the ones of Microsoft's minidumpapiset.h plus the Breakpad, Crashpad
and Mozilla extensions; enum member names follow rust-minidump's spelling
because the `dump` report prints them.
"""

from __future__ import annotations

from inspector.core.enums import Enum, IntEnum
from inspector.core.record import Record

#: "MDMP" read as a little-endian u32.
MINIDUMP_SIGNATURE = 0x504D444D
#: Low 16 bits of the header's version field.
MINIDUMP_VERSION = 0xA793

HEADER_SIZE = 32
DIRECTORY_ENTRY_SIZE = 12


class Location(Record):
    """A MINIDUMP_LOCATION_DESCRIPTOR: `data_size` bytes at file offset `rva`."""

    data_size: int
    rva: int


class StreamType(IntEnum):
    """Known stream types (the directory's `stream_type`)."""

    UnusedStream = 0
    ReservedStream0 = 1
    ReservedStream1 = 2
    ThreadListStream = 3
    ModuleListStream = 4
    MemoryListStream = 5
    ExceptionStream = 6
    SystemInfoStream = 7
    ThreadExListStream = 8
    Memory64ListStream = 9
    CommentStreamA = 10
    CommentStreamW = 11
    HandleDataStream = 12
    FunctionTable = 13
    UnloadedModuleListStream = 14
    MiscInfoStream = 15
    MemoryInfoListStream = 16
    ThreadInfoListStream = 17
    HandleOperationListStream = 18
    TokenStream = 19
    JavaScriptDataStream = 20
    SystemMemoryInfoStream = 21
    ProcessVmCountersStream = 22
    IptTraceStream = 23
    ThreadNamesStream = 24
    ceStreamNull = 0x8000
    ceStreamSystemInfo = 0x8001
    ceStreamException = 0x8002
    ceStreamModuleList = 0x8003
    ceStreamProcessList = 0x8004
    ceStreamThreadList = 0x8005
    ceStreamThreadContextList = 0x8006
    ceStreamThreadCallStackList = 0x8007
    ceStreamMemoryVirtualList = 0x8008
    ceStreamMemoryPhysicalList = 0x8009
    ceStreamBucketParameters = 0x800A
    ceStreamProcessModuleMap = 0x800B
    ceStreamDiagnosisList = 0x800C
    LastReservedStream = 0xFFFF
    # Breakpad ("Gg")
    BreakpadInfoStream = 0x47670001
    AssertionInfoStream = 0x47670002
    LinuxCpuInfo = 0x47670003
    LinuxProcStatus = 0x47670004
    LinuxLsbRelease = 0x47670005
    LinuxCmdLine = 0x47670006
    LinuxEnviron = 0x47670007
    LinuxAuxv = 0x47670008
    LinuxMaps = 0x47670009
    LinuxDsoDebug = 0x4767000A
    # Crashpad ("CP")
    CrashpadInfoStream = 0x43500001
    # Mozilla ("Mz")
    MozMacosCrashInfoStream = 0x4D7A0001
    MozMacosBootargsStream = 0x4D7A0002
    MozLinuxLimits = 0x4D7A0003
    MozSoftErrors = 0x4D7A0004


#: Stream types rust-minidump reports as known but not implemented
#: ("Unimplemented streams encountered"). ThreadInfoList and the Linux text
#: streams we do read are not in this set (CmdLine, Auxv and DsoDebug are:
#: rust-minidump keeps them raw).
RM_UNIMPLEMENTED_STREAMS = frozenset(
    {
        StreamType.UnusedStream,
        StreamType.ReservedStream0,
        StreamType.ReservedStream1,
        StreamType.LastReservedStream,
        StreamType.ThreadExListStream,
        StreamType.CommentStreamA,
        StreamType.CommentStreamW,
        StreamType.FunctionTable,
        StreamType.HandleOperationListStream,
        StreamType.TokenStream,
        StreamType.JavaScriptDataStream,
        StreamType.SystemMemoryInfoStream,
        StreamType.ProcessVmCountersStream,
        StreamType.IptTraceStream,
        *(t for t in StreamType if 0x8000 <= t <= 0x800C),
        StreamType.LinuxCmdLine,
        StreamType.LinuxAuxv,
        StreamType.LinuxDsoDebug,
    }
)


KNOWN_STREAM_TYPES = frozenset(int(t) for t in StreamType)


def stream_type_name(stream_type: int) -> str:
    """rust-minidump's name for a stream type, 'unknown' when it has none."""
    try:
        return StreamType(stream_type).name
    except ValueError:
        return "unknown"


class StreamVendor(Enum):
    """Who defined a stream type, decided by the high 16 bits."""

    OFFICIAL = "Official"
    GOOGLE = "Google"
    MOZILLA = "Mozilla"
    CRASHPAD = "Crashpad"
    OTHER = "Other"

    @classmethod
    def of(cls, stream_type: int) -> StreamVendor:
        if stream_type <= StreamType.LastReservedStream:
            return cls.OFFICIAL
        return _VENDOR_PREFIXES.get(stream_type >> 16, cls.OTHER)

    @property
    def rust_minidump_label(self) -> str:
        """The vendor text rust-minidump prints (it has no Crashpad entry)."""
        return _RM_VENDOR_LABELS[self]


_VENDOR_PREFIXES = {
    0x4767: StreamVendor.GOOGLE,
    0x4D7A: StreamVendor.MOZILLA,
    0x4350: StreamVendor.CRASHPAD,
}
_RM_VENDOR_LABELS = {
    StreamVendor.OFFICIAL: "Official",
    StreamVendor.GOOGLE: "Google Extension",
    StreamVendor.MOZILLA: "Mozilla Extension",
    StreamVendor.CRASHPAD: "Unknown Extension",
    StreamVendor.OTHER: "Unknown Extension",
}


class ProcessorArchitecture(IntEnum):
    """`MINIDUMP_SYSTEM_INFO.processor_architecture`."""

    INTEL = 0
    MIPS = 1
    ALPHA = 2
    PPC = 3
    SHX = 4
    ARM = 5
    IA64 = 6
    ALPHA64 = 7
    MSIL = 8
    AMD64 = 9
    IA32_ON_WIN64 = 10
    ARM64 = 12
    SPARC = 0x8001
    PPC64 = 0x8002
    ARM64_OLD = 0x8003
    MIPS64 = 0x8004
    UNKNOWN = 0xFFFF


class PlatformId(IntEnum):
    """`MINIDUMP_SYSTEM_INFO.platform_id` (Windows values plus Breakpad extensions)."""

    WIN32S = 1
    WIN32_WINDOWS = 2
    WIN32_NT = 3
    WIN32_CE = 4
    UNIX = 0x8000
    MACOS = 0x8101
    IOS = 0x8102
    LINUX = 0x8201
    SOLARIS = 0x8202
    ANDROID = 0x8203
    PS3 = 0x8204
    NACL = 0x8205
    FUCHSIA = 0x8206


class CvSignature(IntEnum):
    """First u32 of a module's CodeView record."""

    PDB20 = 0x3031424E  # "NB10"
    PDB70 = 0x53445352  # "RSDS"
    ELF = 0x4270454C  # "LEpB" (Breakpad's build-id record)
    CV41 = 0x3930424E  # "NB09"
    CV50 = 0x3131424E  # "NB11"


#: VS_FIXEDFILEINFO.signature and struct_version when the record is filled in.
VS_FFI_SIGNATURE = 0xFEEF04BD
VS_FFI_STRUCVERSION = 0x00010000

#: Bits of `context_flags` that name the CPU (rust-minidump masks with this).
CONTEXT_CPU_MASK = 0xFFFFFF00


class ContextCpuFlag(IntEnum):
    """CPU-type bits of `context_flags`."""

    X86 = 0x00010000
    AMD64 = 0x00100000
    ARM = 0x40000000
    ARM64 = 0x00400000
    ARM64_OLD = 0x80000000
    MIPS = 0x00040000
    MIPS64 = 0x00080000
    PPC = 0x20000000
    PPC64 = 0x01000000
    SPARC = 0x10000000
    ALPHA = 0x00020000
    SHX = 0x000000C0
    ARM_OLD = 0x00000040


#: Every CPU bit rust-minidump knows; flags are compared after masking with these.
_KNOWN_CPU_BITS = 0
for _flag in ContextCpuFlag:
    _KNOWN_CPU_BITS |= int(_flag)


def context_cpu_bits(context_flags: int) -> int:
    """The CPU-type bits of `context_flags` as rust-minidump sees them."""
    return context_flags & CONTEXT_CPU_MASK & _KNOWN_CPU_BITS


class MiscInfoFlag(IntEnum):
    """`MINIDUMP_MISC_INFO.flags1`: which fields hold data."""

    PROCESS_ID = 0x001
    PROCESS_TIMES = 0x002
    PROCESSOR_POWER_INFO = 0x004
    PROCESS_INTEGRITY = 0x010
    PROCESS_EXECUTE_FLAGS = 0x020
    TIMEZONE = 0x040
    PROTECTED_PROCESS = 0x080
    BUILDSTRING = 0x100
    PROCESS_COOKIE = 0x200


class BreakpadInfoValid(IntEnum):
    """`MINIDUMP_BREAKPAD_INFO.validity`."""

    DUMP_THREAD_ID = 1
    REQUESTING_THREAD_ID = 2


#: XSTATE feature index -> name (as rust-minidump prints it in MiscInfo v5).
XSTATE_FEATURE_NAMES = {
    0: "LEGACY_FLOATING_POINT",
    1: "LEGACY_SSE",
    2: "GSSE_AND_AVX",
    3: "MPX_BNDREGS",
    4: "MPX_BNDCSR",
    5: "AVX512_KMASK",
    6: "AVX512_ZMM_H",
    7: "ACK512_ZMM",
    8: "XSTATE_IPT",
    62: "XSTATE_LWP",
}

#: Crashpad annotation types.
ANNOTATION_TYPE_INVALID = 0
ANNOTATION_TYPE_STRING = 1
ANNOTATION_TYPE_USER_DEFINED = 0x8000

#: MINIDUMP_HANDLE_OBJECT_INFORMATION_TYPE values that exist.
HANDLE_OBJECT_INFORMATION_TYPES = (
    "MiniHandleObjectInformationNone",
    "MiniThreadInformation1",
    "MiniMutantInformation1",
    "MiniMutantInformation2",
    "MiniProcessInformation1",
    "MiniProcessInformation2",
    "MiniEventInformation1",
    "MiniSectionInformation1",
    "MiniSemaphoreInformation1",
    "MiniHandleObjectInformationTypeMax",
)


class Header(Record):
    """The minidump header (MINIDUMP_HEADER)."""

    signature: int
    version: int
    stream_count: int
    stream_directory_rva: int
    checksum: int
    time_date_stamp: int
    flags: int


class DirectoryEntry(Record):
    """One directory entry: `data_size` bytes of stream `stream_type` at file offset `rva`."""

    index: int
    stream_type: int
    data_size: int
    rva: int

    @property
    def name(self) -> str:
        """rust-minidump's name for the type ('unknown' if it has none)."""
        return stream_type_name(self.stream_type)

    @property
    def vendor(self) -> StreamVendor:
        return StreamVendor.of(self.stream_type)

    @property
    def is_known(self) -> bool:
        return self.stream_type in KNOWN_STREAM_TYPES
