"""The Exception stream and the crash reason / crash address rust-minidump derives from it."""

from __future__ import annotations

from inspector.core.minidump import crash_codes as codes
from inspector.core.minidump.context import CpuContext
from inspector.core.minidump.format import Location
from inspector.core.minidump.reader import StreamContext, read_stream_context
from inspector.core.record import Record
from inspector.core.types import Cpu, Os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from inspector.core.minidump.reader import ContextReader

EXCEPTION_STREAM_SIZE = 168
#: offset of the context's (size, rva) descriptor in MINIDUMP_EXCEPTION_STREAM
EXCEPTION_CONTEXT_OFFSET = 160
_32_BIT_CPUS = frozenset({Cpu.X86, Cpu.ARM, Cpu.MIPS, Cpu.PPC, Cpu.SPARC})


class ExceptionStream(Record):
    """MINIDUMP_EXCEPTION_STREAM: the crashing (or dump-requesting) thread and its exception record.

    `context` is the CPU state at the exception, which is what the crashing
    thread's first frame starts from (None if missing or unreadable).
    """

    thread_id: int
    exception_code: int
    exception_flags: int
    exception_record: int
    exception_address: int
    number_parameters: int
    exception_information: tuple[int, ...]
    context_location: Location
    context: CpuContext | None

    @property
    def parameters(self) -> tuple[int, ...]:
        """The exception_information entries that `number_parameters` says are used (at most 15)."""
        return self.exception_information[: min(self.number_parameters, 15)]


def parse_exception(ctx: StreamContext, read_context: ContextReader | None) -> ExceptionStream:
    f = ctx.cursor().unpack("IIIIQQII15QII", "exception stream")
    location = Location(f[23], f[24])
    context = None
    if read_context is not None:
        at = ctx.offset + EXCEPTION_CONTEXT_OFFSET
        context = read_stream_context(ctx, read_context, location, what="exception context", at=at)
    return ExceptionStream(f[0], f[2], f[3], f[4], f[5], f[6], tuple(f[8:23]), location, context)


def crash_address(exception: ExceptionStream, os: Os, cpu: Cpu) -> int:
    """The address the crash is about: the faulting data address for Windows access violations and
    in-page errors, otherwise the exception address; masked to 32 bits on 32-bit CPUs."""
    address = exception.exception_address
    if (
        os is Os.WINDOWS
        and exception.exception_code in (codes.EXCEPTION_ACCESS_VIOLATION, codes.EXCEPTION_IN_PAGE_ERROR)
        and exception.number_parameters >= 2
    ):
        address = exception.exception_information[1]
    return address & 0xFFFFFFFF if cpu in _32_BIT_CPUS else address


def crash_reason(exception: ExceptionStream, os: Os, cpu: Cpu) -> str:
    """rust-minidump's `crash_info.type` text for this exception on `os` / `cpu`."""
    if os in (Os.MACOS, Os.IOS):
        reason = _mac_reason(exception, cpu)
    elif os in (Os.LINUX, Os.ANDROID):
        reason = _linux_reason(exception.exception_code, exception.exception_flags)
    elif os is Os.WINDOWS:
        reason = _windows_reason(exception)
    else:
        reason = None
    if reason is None:
        return f"unknown {exception.exception_code:#010x} / {exception.exception_flags:#010x}"
    return reason


# --- Windows ----------------------------------------------------------------------------------------


def windows_error_name(code: int) -> str:
    """A Windows error / status value as rust-minidump names it (WinError, then NTSTATUS, then facility).

    This is what rust-minidump prints for a thread's `last_error_value`.
    """
    if code in codes.WINDOWS_ERRORS:
        return codes.WINDOWS_ERRORS[code]
    if code in codes.WINDOWS_NTSTATUS:
        return codes.WINDOWS_NTSTATUS[code]
    if code & 0xF0000000:
        facility = codes.WINDOWS_FACILITIES.get((code & 0x0FFF0000) >> 16)
        error = codes.WINDOWS_ERRORS.get(code & 0xFFFF)
        if facility and error:
            return f"{facility} / {error}"
    return f"unknown {code:#010x}"


def windows_exception_name(code: int) -> str:
    """An exception code without its parameters (EXCEPTION_* first, then as `windows_error_name`)."""
    if code in codes.WINDOWS_EXCEPTIONS:
        return codes.WINDOWS_EXCEPTION_MESSAGES.get(code, codes.WINDOWS_EXCEPTIONS[code])
    return windows_error_name(code)


def _nt_status_name(value: int) -> str:
    return codes.WINDOWS_NTSTATUS.get(value, f"{value:#010x}")


def _windows_reason(exception: ExceptionStream) -> str:
    code = exception.exception_code
    info = exception.exception_information
    nparams = exception.number_parameters
    if code == codes.EXCEPTION_ACCESS_VIOLATION and nparams >= 1 and info[0] in codes.ACCESS_TYPES:
        return f"EXCEPTION_ACCESS_VIOLATION_{codes.ACCESS_TYPES[info[0]]}"
    if code == codes.EXCEPTION_IN_PAGE_ERROR and nparams >= 3 and info[0] in codes.ACCESS_TYPES:
        status = info[2] & 0xFFFFFFFF
        return f"EXCEPTION_IN_PAGE_ERROR_{codes.ACCESS_TYPES[info[0]]} / {_nt_status_name(status)}"
    if (
        code == codes.STATUS_STACK_BUFFER_OVERRUN
        and code not in codes.WINDOWS_EXCEPTIONS
        and code not in codes.WINDOWS_ERRORS
        and nparams >= 1
    ):
        fast_fail = info[0] & 0xFFFFFFFF
        return (
            f"EXCEPTION_STACK_BUFFER_OVERRUN / {codes.WINDOWS_FAST_FAIL.get(fast_fail, f'{fast_fail:#010x}')}"
        )
    return windows_exception_name(code)


# --- Linux / Android --------------------------------------------------------------------------------


def _linux_reason(code: int, flags: int) -> str | None:
    signal = codes.LINUX_SIGNALS.get(code)
    if signal is None:
        return None
    kinds = codes.LINUX_SIGNAL_CODES.get(code)
    if kinds is not None and flags in kinds:
        return f"{signal} / {kinds[flags]}"
    si_code = flags - (1 << 32) if flags & 0x80000000 else flags
    generic = codes.LINUX_SI_CODES.get(si_code)
    if generic is None:
        return f"{signal} / {flags:#010x}"
    return signal if si_code == 0 else f"{signal} / {generic}"


# --- macOS / iOS ------------------------------------------------------------------------------------


def _mac_cpu_family(cpu: Cpu) -> str | None:
    if cpu is Cpu.ARM64:
        return "arm"
    if cpu is Cpu.PPC:
        return "ppc"
    if cpu in (Cpu.X86, Cpu.AMD64):
        return "x86"
    return None


def _mac_reason(exception: ExceptionStream, cpu: Cpu) -> str | None:
    from inspector.core.minidump import crash_codes_mac as mac_codes  # macOS dumps only

    code = exception.exception_code
    flags = exception.exception_flags
    name = mac_codes.MAC_EXCEPTIONS.get(code)
    if name is None:
        return None
    if code == mac_codes.MAC_SIMULATED:
        return "Simulated Exception"
    family = _mac_cpu_family(cpu)
    if name == "EXC_BAD_ACCESS" and flags in mac_codes.MAC_KERN_CODES:
        return f"EXC_BAD_ACCESS / {mac_codes.MAC_KERN_CODES[flags]}"
    if family is not None:
        table = mac_codes.MAC_CPU_CODES.get((name, family))
        if table is not None and flags in table:
            return f"{name} / {table[flags]}"
    if name == "EXC_SOFTWARE" and flags in mac_codes.MAC_SOFTWARE_CODES:
        return f"EXC_SOFTWARE / {mac_codes.MAC_SOFTWARE_CODES[flags]}"
    info = exception.exception_information
    if name == "EXC_RESOURCE":
        kind = mac_codes.MAC_RESOURCE_TYPES.get((flags >> 29) & 0x7)
        if kind is not None:
            return _exc_resource(kind, info[1], info[2])
    if name == "EXC_GUARD":
        kind = mac_codes.MAC_GUARD_TYPES.get((flags >> 29) & 0x7)
        if kind is not None:
            return _exc_guard(kind, info[1], info[2])
    return f"{name} / {flags:#010x}"


def _exc_resource(kind: str, code: int, subcode: int) -> str:
    from inspector.core.minidump import crash_codes_mac as mac_codes

    flavor = mac_codes.MAC_RESOURCE_FLAVORS[kind].get((code >> 58) & 0x7)
    head = f"EXC_RESOURCE / {kind} / "
    if flavor is None:
        return head + f"{code:#018x} / {subcode:#018x}"
    if kind == "RESOURCE_TYPE_CPU":
        return head + (
            f"{flavor} interval: {(code >> 7) & 0x1FFFFFF}s CPU limit: {code & 0x7}% "
            f"CPU consumed: {subcode & 0x7}%"
        )
    if kind == "RESOURCE_TYPE_WAKEUPS":
        return head + (
            f"{flavor} interval: {(code >> 20) & 0xFFFFF}s wakeups permitted: {code & 0xFFF} "
            f"wakeups observed: {subcode & 0xFFF}"
        )
    if kind == "RESOURCE_TYPE_MEMORY":
        return head + f"{flavor} high watermark limit: {code & 0x1FFF}MiB"
    if kind == "RESOURCE_TYPE_IO":
        return head + (
            f"{flavor} interval: {(code >> 15) & 0x1FFFF}s I/O limit: {code & 0x7FFF}% "
            f"I/O observed: {subcode & 0x7FFF}%"
        )
    return head + f"{flavor} high watermark limit: {code & 0x7FFF}"


def _exc_guard(kind: str, code: int, subcode: int) -> str:
    from inspector.core.minidump import crash_codes_mac as mac_codes

    head = f"EXC_GUARD / {kind}"
    if kind == "GUARD_TYPE_NONE":
        return head
    if kind == "GUARD_TYPE_USER":
        return head + f"/ namespace: {code & 0xFFFFFFFF} guard identifier: {subcode}"
    flavor = mac_codes.MAC_GUARD_FLAVORS[kind].get((code >> 32) & 0x1FFFFFFF)
    if flavor is None:
        return head + f" / {code:#018x} / {subcode:#018x}"
    if kind == "GUARD_TYPE_MACH_PORT":
        port = code & 0xFFFFFFF
        if subcode:
            return head + f" / {flavor} port name: {port} subcode: {subcode}"
        return head + f" / {flavor} port name: {port}"
    if kind == "GUARD_TYPE_FD":
        return head + f" / {flavor} file descriptor: {code & 0xFFFFFFF} guard identifier: {subcode}"
    if kind == "GUARD_TYPE_VN":
        return head + f" / {flavor} pid: {code & 0xFFFFFFF} guard identifier: {subcode}"
    if kind == "GUARD_TYPE_VIRT_MEMORY":
        return head + f" / {flavor} offset: {subcode}"
    return head + f" / {flavor} syscall: {subcode}"
