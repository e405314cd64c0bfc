"""Minidump reader: header, directory, every stream, CPU contexts and memory, all bounds-checked.

Entry point: `Minidump.open(path)` / `Minidump.from_bytes(data)`.
"""

from __future__ import annotations

from inspector.core.lazy import lazy_names

# Each name is imported from its module on first use: importing one module of this package no
# longer imports all of them (start-up of a headless stackwalk; `inspector.core.lazy`).
__getattr__ = lazy_names(
    __name__,
    {
        "context": (
            "REGISTER_SETS",
            "ContextLayout",
            "CpuContext",
            "RegisterSet",
            "layout_for",
            "print_order",
            "read_context",
        ),
        "crashpad": (
            "Annotation",
            "CrashpadInfo",
            "ModuleCrashpadInfo",
        ),
        "dump": ("Minidump",),
        "errors": (
            "BadData",
            "BadRva",
            "DirectoryTruncated",
            "DumpClosed",
            "HeaderMismatch",
            "NotAMinidump",
            "StreamProblem",
            "StreamSizeMismatch",
            "StreamTruncated",
            "UnreadableFile",
            "VersionMismatch",
        ),
        "exception": (
            "ExceptionStream",
            "crash_address",
            "crash_reason",
            "windows_error_name",
            "windows_exception_name",
        ),
        "format": (
            "DirectoryEntry",
            "Header",
            "Location",
            "StreamType",
            "StreamVendor",
        ),
        "handles": (
            "HandleData",
            "HandleDescriptor",
        ),
        "linux": (
            "LinuxAuxv",
            "LinuxCmdLine",
            "LinuxCpuInfo",
            "LinuxDsoDebug",
            "LinuxEnviron",
            "LinuxLsbRelease",
            "LinuxMapping",
            "LinuxMaps",
            "LinuxProcStatus",
        ),
        "memory": (
            "MemoryRegion",
            "MemoryView",
        ),
        "memory_lists": (
            "MemoryDescriptor",
            "MemoryInfo",
            "MemoryInfoList",
            "MemoryList",
        ),
        "modules": (
            "DebugId",
            "Guid",
            "Module",
            "ModuleList",
            "UnloadedModule",
            "UnloadedModuleList",
            "basename",
        ),
        "mozilla": (
            "LinuxLimits",
            "MacBootargs",
            "MacCrashInfo",
            "MacCrashRecord",
            "SoftErrors",
        ),
        "system": (
            "AssertionInfo",
            "BreakpadInfo",
            "MiscInfo",
            "SystemInfo",
        ),
        "threads": (
            "Thread",
            "ThreadInfo",
            "ThreadInfoList",
            "ThreadList",
            "ThreadName",
            "ThreadNames",
        ),
    },
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:  # the same names, for type checkers
    from inspector.core.minidump.context import (
        REGISTER_SETS,
        ContextLayout,
        CpuContext,
        RegisterSet,
        layout_for,
        print_order,
        read_context,
    )
    from inspector.core.minidump.crashpad import Annotation, CrashpadInfo, ModuleCrashpadInfo
    from inspector.core.minidump.dump import Minidump
    from inspector.core.minidump.errors import (
        BadData,
        BadRva,
        DirectoryTruncated,
        DumpClosed,
        HeaderMismatch,
        NotAMinidump,
        StreamProblem,
        StreamSizeMismatch,
        StreamTruncated,
        UnreadableFile,
        VersionMismatch,
    )
    from inspector.core.minidump.exception import (
        ExceptionStream,
        crash_address,
        crash_reason,
        windows_error_name,
        windows_exception_name,
    )
    from inspector.core.minidump.format import DirectoryEntry, Header, Location, StreamType, StreamVendor
    from inspector.core.minidump.handles import HandleData, HandleDescriptor
    from inspector.core.minidump.linux import (
        LinuxAuxv,
        LinuxCmdLine,
        LinuxCpuInfo,
        LinuxDsoDebug,
        LinuxEnviron,
        LinuxLsbRelease,
        LinuxMapping,
        LinuxMaps,
        LinuxProcStatus,
    )
    from inspector.core.minidump.memory import MemoryRegion, MemoryView
    from inspector.core.minidump.memory_lists import MemoryDescriptor, MemoryInfo, MemoryInfoList, MemoryList
    from inspector.core.minidump.modules import (
        DebugId,
        Guid,
        Module,
        ModuleList,
        UnloadedModule,
        UnloadedModuleList,
        basename,
    )
    from inspector.core.minidump.mozilla import (
        LinuxLimits,
        MacBootargs,
        MacCrashInfo,
        MacCrashRecord,
        SoftErrors,
    )
    from inspector.core.minidump.system import AssertionInfo, BreakpadInfo, MiscInfo, SystemInfo
    from inspector.core.minidump.threads import (
        Thread,
        ThreadInfo,
        ThreadInfoList,
        ThreadList,
        ThreadName,
        ThreadNames,
    )

__all__ = [
    "REGISTER_SETS",
    "Annotation",
    "AssertionInfo",
    "BadData",
    "BadRva",
    "BreakpadInfo",
    "ContextLayout",
    "CpuContext",
    "CrashpadInfo",
    "DebugId",
    "DirectoryEntry",
    "DirectoryTruncated",
    "DumpClosed",
    "ExceptionStream",
    "Guid",
    "HandleData",
    "HandleDescriptor",
    "Header",
    "HeaderMismatch",
    "LinuxAuxv",
    "LinuxCmdLine",
    "LinuxCpuInfo",
    "LinuxDsoDebug",
    "LinuxEnviron",
    "LinuxLimits",
    "LinuxLsbRelease",
    "LinuxMapping",
    "LinuxMaps",
    "LinuxProcStatus",
    "Location",
    "MacBootargs",
    "MacCrashInfo",
    "MacCrashRecord",
    "MemoryDescriptor",
    "MemoryInfo",
    "MemoryInfoList",
    "MemoryList",
    "MemoryRegion",
    "MemoryView",
    "Minidump",
    "MiscInfo",
    "Module",
    "ModuleCrashpadInfo",
    "ModuleList",
    "NotAMinidump",
    "RegisterSet",
    "SoftErrors",
    "StreamProblem",
    "StreamSizeMismatch",
    "StreamTruncated",
    "StreamType",
    "StreamVendor",
    "SystemInfo",
    "Thread",
    "ThreadInfo",
    "ThreadInfoList",
    "ThreadList",
    "ThreadName",
    "ThreadNames",
    "UnloadedModule",
    "UnloadedModuleList",
    "UnreadableFile",
    "VersionMismatch",
    "basename",
    "crash_address",
    "crash_reason",
    "layout_for",
    "print_order",
    "read_context",
    "windows_error_name",
    "windows_exception_name",
]
