"""Crash reason text and crash address, exactly as rust-minidump's `crash_info` reports them."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from inspector.core.minidump import windows_error_name
from inspector.core.types import Cpu, Os
from tests.synth.minidump import SynthMinidump


def reason(
    os: Os, code: int, flags: int = 0, parameters: Sequence[int] = (), cpu: Cpu = Cpu.AMD64
) -> str | None:
    dump = (
        SynthMinidump(cpu=cpu, os=os).add_thread(1).add_exception(1, code, flags=flags, parameters=parameters)
    )
    return dump.to_minidump().crash_reason


@pytest.mark.parametrize(
    ("code", "parameters", "expected"),
    [
        (0xC0000005, (0, 0x45), "EXCEPTION_ACCESS_VIOLATION_READ"),
        (0xC0000005, (1, 0x45), "EXCEPTION_ACCESS_VIOLATION_WRITE"),
        (0xC0000005, (8, 0x45), "EXCEPTION_ACCESS_VIOLATION_EXEC"),
        (0xC0000005, (3, 0x45), "EXCEPTION_ACCESS_VIOLATION"),
        (0xC0000005, (), "EXCEPTION_ACCESS_VIOLATION"),
        (0xC0000006, (1, 0x1000, 0xC000009C), "EXCEPTION_IN_PAGE_ERROR_WRITE / STATUS_DEVICE_DATA_ERROR"),
        (0xC0000006, (0, 0x1000, 0xFFFFFFFF_C0DEC0DE), "EXCEPTION_IN_PAGE_ERROR_READ / 0xc0dec0de"),
        (0xC0000006, (0, 0x1000), "EXCEPTION_IN_PAGE_ERROR"),
        (0xC0000409, (7,), "EXCEPTION_STACK_BUFFER_OVERRUN / FAST_FAIL_FATAL_APP_EXIT"),
        (0xC0000409, (0x1234,), "EXCEPTION_STACK_BUFFER_OVERRUN / 0x00001234"),
        (0xC0000409, (), "STATUS_STACK_BUFFER_OVERRUN"),
        (0xC00000FD, (), "EXCEPTION_STACK_OVERFLOW"),
        (0x80000003, (), "EXCEPTION_BREAKPOINT"),
        (0xC000000D, (), "STATUS_INVALID_PARAMETER"),
        (0xC0000374, (), "STATUS_HEAP_CORRUPTION"),
        (0xE06D7363, (), "Unhandled C++ Exception"),
        (0xE0000008, (), "Out of Memory"),
        (0x0517A7ED, (), "Simulated Exception"),
        (0x00000000, (), "ERROR_SUCCESS"),  # WinError is looked up before NTSTATUS
        (0x00000102, (), "STATUS_TIMEOUT"),
        (0xC06D007E, (), "FACILITY_VISUALCPP / ERROR_MOD_NOT_FOUND"),
        (0xDEADBEEF, (), "unknown 0xdeadbeef"),
    ],
)
def test_windows_reasons(code: int, parameters: tuple[int, ...], expected: str) -> None:
    assert reason(Os.WINDOWS, code, parameters=parameters) == expected


def test_windows_error_names_for_last_error_values() -> None:
    assert windows_error_name(0) == "ERROR_SUCCESS"
    assert windows_error_name(183) == "ERROR_ALREADY_EXISTS"
    assert windows_error_name(0x102) == "STATUS_TIMEOUT"
    assert windows_error_name(0x12345) == "unknown 0x00012345"


@pytest.mark.parametrize(
    ("signal", "flags", "expected"),
    [
        (11, 0, "SIGSEGV"),
        (11, 1, "SIGSEGV / SEGV_MAPERR"),
        (11, 2, "SIGSEGV / SEGV_ACCERR"),
        (11, 0x80, "SIGSEGV / SI_KERNEL"),
        (11, 0x7777, "SIGSEGV / 0x00007777"),
        (4, 2, "SIGILL / ILL_ILLOPN"),
        (4, 0, "SIGILL"),
        (4, 0xFFFFFFFF, "SIGILL / SI_QUEUE"),
        (4, 0xFFFFFFFA, "SIGILL / SI_TKILL"),
        (8, 1, "SIGFPE / FPE_INTDIV"),
        (8, 0, "SIGFPE"),
        (7, 2, "SIGBUS / BUS_ADRERR"),
        (5, 1, "SIGTRAP / TRAP_BRKPT"),
        (31, 1, "SIGSYS / SYS_SECCOMP"),
        (6, 0, "SIGABRT"),
        (6, 0xFFFFFFFA, "SIGABRT / SI_TKILL"),
        (6, 1, "SIGABRT / 0x00000001"),
        (0xFFFFFFFF, 0, "DUMP_REQUESTED"),
        (64, 0, "unknown 0x00000040 / 0x00000000"),
    ],
)
def test_linux_and_android_reasons(signal: int, flags: int, expected: str) -> None:
    assert reason(Os.LINUX, signal, flags) == expected
    assert reason(Os.ANDROID, signal, flags) == expected


@pytest.mark.parametrize(
    ("cpu", "code", "flags", "parameters", "expected"),
    [
        (Cpu.AMD64, 1, 1, (), "EXC_BAD_ACCESS / KERN_INVALID_ADDRESS"),
        (Cpu.ARM64, 1, 2, (), "EXC_BAD_ACCESS / KERN_PROTECTION_FAILURE"),
        (Cpu.AMD64, 1, 13, (), "EXC_BAD_ACCESS / EXC_I386_GPFLT"),
        (Cpu.ARM64, 1, 0x0102, (), "EXC_BAD_ACCESS / EXC_ARM_DA_DEBUG"),
        (Cpu.ARM, 1, 0x0102, (), "EXC_BAD_ACCESS / 0x00000102"),  # 32-bit ARM has no code table
        (Cpu.AMD64, 2, 1, (), "EXC_BAD_INSTRUCTION / EXC_I386_INVOP"),
        (Cpu.ARM64, 2, 1, (), "EXC_BAD_INSTRUCTION / EXC_ARM_UNDEFINED"),
        (Cpu.AMD64, 3, 1, (), "EXC_ARITHMETIC / EXC_I386_DIV"),
        (Cpu.PPC, 3, 2, (), "EXC_ARITHMETIC / EXC_PPC_ZERO_DIVIDE"),
        (Cpu.AMD64, 5, 0x00010002, (), "EXC_SOFTWARE / SIGABRT"),
        (Cpu.AMD64, 5, 0xDEADC0DE, (), "EXC_SOFTWARE / UNCAUGHT_NS_EXCEPTION"),
        (Cpu.AMD64, 6, 2, (), "EXC_BREAKPOINT / EXC_I386_BPT"),
        (Cpu.ARM64, 6, 1, (), "EXC_BREAKPOINT / EXC_ARM_BREAKPOINT"),
        (Cpu.AMD64, 6, 9, (), "EXC_BREAKPOINT / 0x00000009"),
        (Cpu.AMD64, 0x43507378, 0, (), "Simulated Exception"),
        (Cpu.AMD64, 0x43506E78, 0, (), "unknown 0x43506e78 / 0x00000000"),
        (Cpu.AMD64, 0, 0, (), "unknown 0x00000000 / 0x00000000"),
        (
            Cpu.ARM64,
            11,
            3 << 29,
            (0, (1 << 58) | 500, 0),
            "EXC_RESOURCE / RESOURCE_TYPE_MEMORY / FLAVOR_HIGH_WATERMARK high watermark limit: 500MiB",
        ),
        (
            Cpu.ARM64,
            11,
            1 << 29,
            (0, (2 << 58) | (180 << 7) | 5, 3),
            "EXC_RESOURCE / RESOURCE_TYPE_CPU / FLAVOR_CPU_MONITOR_FATAL interval: 180s CPU limit: 5% "
            "CPU consumed: 3%",
        ),
        (
            Cpu.ARM64,
            11,
            1 << 29,
            (0, 7 << 58, 3),
            "EXC_RESOURCE / RESOURCE_TYPE_CPU / 0x1c00000000000000 / 0x0000000000000003",
        ),
        (
            Cpu.ARM64,
            12,
            2 << 29,
            (0, (1 << 32) | 9, 0xABC),
            "EXC_GUARD / GUARD_TYPE_FD / GUARD_EXC_CLOSE file descriptor: 9 guard identifier: 2748",
        ),
        (
            Cpu.ARM64,
            12,
            1 << 29,
            (0, (1 << 32) | 0x103, 0),
            "EXC_GUARD / GUARD_TYPE_MACH_PORT / GUARD_EXC_DESTROY port name: 259",
        ),
        (Cpu.ARM64, 12, 3 << 29, (0, 5, 6), "EXC_GUARD / GUARD_TYPE_USER/ namespace: 5 guard identifier: 6"),
        (Cpu.ARM64, 12, 0, (), "EXC_GUARD / GUARD_TYPE_NONE"),
    ],
)
def test_macos_and_ios_reasons(
    cpu: Cpu, code: int, flags: int, parameters: tuple[int, ...], expected: str
) -> None:
    assert reason(Os.MACOS, code, flags, parameters, cpu) == expected
    assert reason(Os.IOS, code, flags, parameters, cpu) == expected


def test_unknown_os_reports_the_raw_code_and_flags() -> None:
    assert reason(Os.FUCHSIA, 11, 1) == "unknown 0x0000000b / 0x00000001"


def test_crash_address_is_the_faulting_address_of_windows_access_violations() -> None:
    dump = (
        SynthMinidump(cpu=Cpu.X86, os=Os.WINDOWS)
        .add_thread(1)
        .add_exception(1, 0xC0000005, address=0x401000, parameters=(1, 0xFFFFFFFF_00000045))
        .to_minidump()
    )
    assert dump.crash_address == 0x45  # masked to 32 bits on x86


def test_crash_address_is_the_exception_address_otherwise() -> None:
    linux = SynthMinidump(cpu=Cpu.AMD64).add_thread(1).add_exception(1, 11, address=0xFFFF_8000_0000_0010)
    assert linux.to_minidump().crash_address == 0xFFFF_8000_0000_0010
    one_param = (
        SynthMinidump(cpu=Cpu.AMD64, os=Os.WINDOWS)
        .add_thread(1)
        .add_exception(1, 0xC0000005, address=0x1234, parameters=(1,))
    )
    assert one_param.to_minidump().crash_address == 0x1234


def test_32_bit_arm_crash_address_is_masked() -> None:
    dump = SynthMinidump(cpu=Cpu.ARM).add_thread(1).add_exception(1, 11, address=0xFFFFFFFF_80001234)
    assert dump.to_minidump().crash_address == 0x80001234


def test_more_than_fifteen_parameters_claimed_is_capped() -> None:
    dump = SynthMinidump(os=Os.WINDOWS).add_thread(1).add_exception(1, 0xC0000005, number_parameters=99)
    exception = dump.to_minidump().exception
    assert exception is not None and exception.number_parameters == 99 and len(exception.parameters) == 15
