"""The state before any walk: system and crash, every thread with only its context frame, the modules.

Also whether a dump is worth a report at all (`check_usable`) and where each thread's walk
starts (`thread_starts`: its context, the exception's for the crashing thread, and its stack).
"""

from __future__ import annotations

from inspector.core.dumpfile import as_microdump
from inspector.core.minidump import Minidump, StreamType, Thread
from inspector.core.minidump.errors import BadData
from inspector.core.minidump.format import stream_type_name
from inspector.core.process.options import ProcessOptions
from inspector.core.process.state import (
    UNKNOWN_SYSTEM,
    ContextSource,
    CrashSummary,
    LsbRelease,
    ModuleEntry,
    Problem,
    ProcessState,
    SystemSummary,
    ThreadStart,
)
from inspector.core.record import replace
from inspector.core.symbols import SymbolSupplier
from inspector.core.types import AddressRange, Cpu
from inspector.core.unwind import (
    CallStack,
    CallStackInfo,
    FrameTrust,
    StackFrame,
    Termination,
    TerminationReason,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from inspector.core.analysis import CrashAnalysis

#: Streams of which at least one must be readable for a dump to be worth a report.
_USEFUL_STREAMS = (
    StreamType.SystemInfoStream,
    StreamType.ThreadListStream,
    StreamType.ModuleListStream,
    StreamType.ExceptionStream,
)


def check_usable(dump: Minidump) -> None:
    """Raise `BadData` when none of the streams a report is made of could be read.

    rust-minidump refuses a dump without a readable thread list or system info. We report
    whatever is left instead (a dump cut off after its module list still names the modules
    and the crash), and refuse only a dump with none of them.
    """
    parsed = {
        StreamType.SystemInfoStream: dump.system_info,
        StreamType.ThreadListStream: dump.thread_list,
        StreamType.ModuleListStream: dump.module_list,
        StreamType.ExceptionStream: dump.exception,
    }
    if any(value is not None for value in parsed.values()):
        return
    first = next((p for p in dump.problems if p.stream_type in _USEFUL_STREAMS), None)
    why = "it has no system info, thread list, module list or exception stream"
    if first is not None:
        why = f"none of its system info, thread list, module list and exception streams can be read ({first})"
    raise BadData(f"nothing in the dump can be reported: {why}")


def _system_summary(dump: Minidump) -> SystemSummary:
    info = dump.system_info
    if info is None:  # the CPU may still be known from the thread contexts
        cpu = dump.cpu
        return replace(
            UNKNOWN_SYSTEM, cpu=cpu, cpu_arch=cpu.value, cpu_microcode_version=dump.cpu_microcode_version
        )
    version, build = info.os_parts
    return SystemSummary(
        info.os,
        info.os_name,
        f"{version} {build}" if build is not None else version,
        info.cpu,
        info.cpu_arch,
        info.cpu_info,
        info.cpu_count,
        dump.cpu_microcode_version,
    )


def unwalked_state(
    dump: Minidump, options: ProcessOptions, supplier: SymbolSupplier, starts: list[ThreadStart]
) -> ProcessState:
    system = _system_summary(dump)
    crash = None
    analysis = None
    problems_from_analysis: list[Problem] = []
    exception = dump.exception
    # A damaged exception stream whose record could be read (e.g. one said to run past the end
    # of the file) still tells the crash; rust-minidump would drop it with the stream.
    if exception is not None:
        reason, address = dump.crash_reason, dump.crash_address
        assert reason is not None and address is not None
        crash = CrashSummary(reason, address, exception.thread_id)
        analysis = _crash_analysis(dump, system, crash, options)
        problems_from_analysis = [Problem("dump", p.code, p.message) for p in analysis.problems]
    requesting = dump.crashing_thread_index
    writer = dump.dump_thread_id
    threads = tuple(_unwalked_thread(dump, thread, starts[thread.index], writer) for thread in dump.threads)
    modules = tuple([ModuleEntry(i, module) for i, module in enumerate(dump.modules)])
    lsb = dump.lsb_release if _usable(dump, StreamType.LinuxLsbRelease) else None
    limits = dump.linux_limits if _usable(dump, StreamType.MozLinuxLimits) else None
    soft = dump.soft_errors if _usable(dump, StreamType.MozSoftErrors) else None
    # a microdump's problems are about its lines (the message says which), not a directory
    unstreamed = "microdump" if as_microdump(dump) is not None else "directory"
    problems = [
        Problem("dump", p.code, p.message, p.offset, _stream_name(p.stream_type, unstreamed), p.stream_type)
        for p in dump.problems
    ]
    if dump.thread_list is None:
        problems.append(
            Problem(
                "dump",
                "NoThreadList",
                "the dump has no readable thread list: no thread is shown",
                where=_stream_name(StreamType.ThreadListStream),
                stream_type=StreamType.ThreadListStream,
            )
        )
    if dump.system_info is None and dump.cpu is Cpu.UNKNOWN:
        problems.append(
            Problem(
                "dump",
                "NoSystemInfo",
                "the dump has no readable system info: the OS and CPU are unknown, "
                "so no thread has registers",
                where=_stream_name(StreamType.SystemInfoStream),
                stream_type=StreamType.SystemInfoStream,
            )
        )
    problems += [
        Problem("symbol path", "SymbolPath", f"{p.path}: {p.reason}", where=str(p.path))
        for p in supplier.problems
    ]
    problems += problems_from_analysis
    return ProcessState(
        path=None if dump.path is None else str(dump.path),
        dump_time=dump.header.time_date_stamp,
        system=system,
        crash=crash,
        requesting_thread=requesting,
        threads=threads,
        modules=modules,
        unloaded_modules=tuple(dump.unloaded_modules),
        memory=dump.memory,
        assertion=_assertion(dump),
        process_id=dump.process_id,
        process_create_time=dump.process_create_time,
        process_uptime=dump.process_uptime,
        linux_memory_map_count=dump.linux_memory_map_count,
        lsb_release=None
        if lsb is None
        else LsbRelease(lsb["id"], lsb["release"], lsb["codename"], lsb["description"]),
        mac_crash_info=dump.mac_crash_info if _usable(dump, StreamType.MozMacosCrashInfoStream) else None,
        mac_boot_args=dump.mac_bootargs if _usable(dump, StreamType.MozMacosBootargsStream) else None,
        proc_limits=None if limits is None else tuple(limits.limits()),
        soft_errors=None if soft is None else soft.value,
        handles=dump.handle_data if _usable(dump, StreamType.HandleDataStream) else None,
        unimplemented_streams=tuple(dump.unimplemented_streams()),
        unknown_streams=tuple(dump.unknown_streams()),
        problems=tuple(problems),
        walk_options=options.walk,
        analysis=analysis,
        microdump=None if (microdump := as_microdump(dump)) is None else microdump.info,
        thread_starts=tuple(starts),
        module_list=dump.modules,
        dump_size=dump.size,
        symbols_searched=bool(options.symbol_paths) or options.uses_servers,
    )


def _crash_analysis(
    dump: Minidump, system: SystemSummary, crash: CrashSummary, options: ProcessOptions
) -> CrashAnalysis:
    """The crashing instruction and what follows from it (the disassemblers load only now)."""
    from inspector.core.analysis.from_dump import analyze_dump, module_file_finder

    providers = options.code_providers
    if providers is None:
        providers = (module_file_finder(options.symbol_paths),)
    return analyze_dump(
        dump,
        cpu=system.cpu,
        os_=system.os,
        reason=crash.reason,
        address=crash.address,
        code_providers=providers,
    )


def _stream_name(stream_type: int | None, unstreamed: str = "directory") -> str:
    """`SystemInfoStream (0x7)`, `stream 0x47670003`, or `unstreamed` (damage in the directory, or
    in a microdump's lines)."""
    if stream_type is None:
        return unstreamed
    name = stream_type_name(stream_type)
    return f"{name} ({stream_type:#x})" if name != "unknown" else f"stream {stream_type:#x}"


def _assertion(dump: Minidump) -> str | None:
    """Breakpad's assertion text; None without one, and for an AssertionInfo stream that says nothing.

    Some writers (Electron's Crashpad on Windows) emit an all-zero AssertionInfo stream:
    "Unknown assertion type 0x00000000" would only mislead.
    """
    assertion = dump.assertion
    if assertion is None or not _usable(dump, StreamType.AssertionInfoStream):
        return None
    if not (assertion.type or assertion.expression or assertion.function or assertion.file or assertion.line):
        return None
    return assertion.describe()


def _usable(dump: Minidump, stream_type: int) -> bool:
    return dump.entry(stream_type) is not None and not dump.strictly_rejected(stream_type)


def thread_starts(dump: Minidump) -> list[ThreadStart]:
    """Each thread's start, worked out once for the unwalked state, the prefetch and the walk."""
    starts = []
    crashing = dump.crashing_thread_index
    exception = dump.exception.context if dump.exception is not None else None
    for thread in dump.threads:
        context = dump.thread_context(thread)
        source = None
        if context is not None:
            from_exception = thread.index == crashing and context is exception
            source = ContextSource.EXCEPTION if from_exception else ContextSource.THREAD
        region = dump.stack_region_for(thread, context)
        declared = thread.stack_location.data_size
        held = thread.stack.size if thread.stack is not None else 0
        # the memory list may still hold the whole stack (rust-minidump looks there too)
        cut = held < declared and (region is None or region.size < declared)
        starts.append(ThreadStart(context, region, source, cut))
    return starts


def _unwalked_thread(dump: Minidump, thread: Thread, start: ThreadStart, writer: int | None) -> CallStack:
    name = dump.thread_name(thread)
    if thread.thread_id == writer:
        # rust-minidump: the thread that wrote the dump (Breakpad's handler thread) is not walked.
        return CallStack(
            thread.index,
            thread.thread_id,
            None,
            (),
            CallStackInfo.DUMP_THREAD_SKIPPED,
            Termination(
                TerminationReason.DUMP_THREAD_SKIPPED, "this thread wrote the dump; it is not walked"
            ),
        )
    last_error = dump.last_error_value(thread)
    context, region = start.context, start.stack
    if context is None:
        return CallStack(
            thread.index,
            thread.thread_id,
            name,
            (),
            CallStackInfo.MISSING_CONTEXT,
            Termination(TerminationReason.NO_CONTEXT, "the thread has no readable CPU context"),
            last_error_value=last_error,
        )
    ip = context.value(context.register_set.instruction_pointer)
    frame = StackFrame(0, FrameTrust.CONTEXT, context, ip, ip)
    return CallStack(
        thread.index,
        thread.thread_id,
        name,
        (frame,),
        CallStackInfo.OK,
        None,
        None if region is None else AddressRange(region.base, region.end),
        last_error,
    )
