"""SystemInfo strings (os, os_ver, cpu_arch, cpu_info), MiscInfo and uptime, Breakpad info, assertion."""

from __future__ import annotations

import pytest

from inspector.core.minidump import StreamType
from inspector.core.minidump.system import format_system_time, format_time_t
from inspector.core.types import Cpu, Os
from tests.synth.minidump import SynthMinidump


def test_windows_x86_system_info_strings() -> None:
    dump = (
        SynthMinidump(cpu=Cpu.X86, os=Os.WINDOWS)
        .add_system_info(
            major_version=5, minor_version=1, build_number=2600, csd_version="Service Pack 2",
            processor_level=6, processor_revision=0x0D08, number_of_processors=1, cpu_vendor="GenuineIntel",
        )
        .to_minidump()
    )  # fmt: skip
    info = dump.system_info
    assert info is not None
    assert (info.os, info.os_name, info.os_ver) == (Os.WINDOWS, "Windows NT", "5.1.2600 Service Pack 2")
    assert (info.cpu, info.cpu_arch, info.cpu_count) == (Cpu.X86, "x86", 1)
    assert info.cpu_info == "GenuineIntel family 6 model 13 stepping 8"
    assert (info.cpu_vendor, info.cpu_family, info.cpu_model, info.cpu_stepping) == ("GenuineIntel", 6, 13, 8)


def test_amd64_cpu_info_has_no_vendor_and_empty_csd_gives_plain_version() -> None:
    info = (
        SynthMinidump(cpu=Cpu.AMD64, os=Os.WINDOWS)
        .add_system_info(major_version=10, minor_version=0, build_number=17134, processor_revision=0x4F01)
        .to_minidump()
        .system_info
    )
    assert (
        info is not None and info.cpu_info == "family 6 model 79 stepping 1" and info.os_ver == "10.0.17134"
    )


@pytest.mark.parametrize(
    ("csd", "expected"),
    [
        (
            "Linux 3.13.0-53-generic #89-Ubuntu SMP Wed May 20 10:34:39 UTC 2015 x86_64",
            "3.13.0-53-generic #89-Ubuntu SMP Wed May 20 10:34:39 UTC 2015",
        ),
        ("Linux 4.4.0-87-generic #110-Ubuntu SMP x86_64 Linux/GNU", "4.4.0-87-generic #110-Ubuntu SMP"),
        ("Linux 5.4.0 x86_64", "5.4.0 "),
        ("Linux 4.0", "4.0 "),
        ("Linux", "0.0.0 Linux"),
        ("", "0.0.0"),
        ("  padded  ", " padded "),  # split on single spaces: the "version" is the empty second word
    ],
)
def test_linux_os_ver_is_parsed_from_the_uname_text(csd: str, expected: str) -> None:
    info = SynthMinidump(os=Os.LINUX).add_system_info(csd_version=csd).to_minidump().system_info
    assert info is not None and info.os_ver == expected


def test_linux_with_a_real_version_number_keeps_it() -> None:
    info = (
        SynthMinidump(os=Os.LINUX)
        .add_system_info(major_version=5, minor_version=10, build_number=3, csd_version="Linux 9.9 #1 x86_64")
        .to_minidump()
        .system_info
    )
    assert info is not None and info.os_ver == "5.10.3 Linux 9.9 #1 x86_64"


def test_mac_os_name_and_build() -> None:
    info = (
        SynthMinidump(os=Os.MACOS)
        .add_system_info(major_version=10, minor_version=11, build_number=6, csd_version="15G1004")
        .to_minidump()
        .system_info
    )
    assert info is not None and (info.os_name, info.os_ver) == ("Mac OS X", "10.11.6 15G1004")


def test_unknown_platform_and_cpu_print_as_rust_minidump_does() -> None:
    info = (
        SynthMinidump()
        .add_system_info(platform_id=0x8206, processor_architecture=0x1234, csd_version=None)
        .to_minidump()
        .system_info
    )
    assert info is not None
    assert info.os is Os.FUCHSIA
    assert info.os_name == "0x0x008206"  # rust-minidump formats an unknown id as "0x{:#08x}"
    assert (info.cpu, info.cpu_arch, info.cpu_info) == (Cpu.UNKNOWN, "unknown", None)
    assert info.csd_version is None


def test_arm_cpu_info_names_vendor_part_and_features() -> None:
    cpuid = 0x410FC090  # ARM Cortex-A9 r0p0
    hwcaps = (1 << 1) | (1 << 2) | (1 << 12) | (1 << 15)
    cpu_data = cpuid.to_bytes(4, "little") + hwcaps.to_bytes(4, "little")
    info = (
        SynthMinidump(cpu=Cpu.ARM, os=Os.ANDROID)
        .add_system_info(processor_level=7, cpu_data=cpu_data)
        .to_minidump()
        .system_info
    )
    assert info is not None and info.cpu_info == "ARMv7 ARM Cortex-A9 features: half,thumb,neon,tls"
    unknown = (
        SynthMinidump(cpu=Cpu.ARM)
        .add_system_info(processor_level=8, cpu_data=(0x99001230).to_bytes(4, "little") + bytes(4))
        .to_minidump()
        .system_info
    )
    assert unknown is not None and unknown.cpu_info == "ARMv8 vendor(0x99) part(0x99001230)"


def test_misc_info_v1_pid_and_process_uptime() -> None:
    dump = (
        SynthMinidump(time_date_stamp=1_000_100)
        .add_misc_info(process_id=1304, process_create_time=1_000_000)
        .to_minidump()
    )
    misc = dump.misc_info
    assert misc is not None and misc.version == 1
    assert dump.process_id == 1304 and dump.process_create_time == 1_000_000
    assert dump.process_uptime == 100


def test_process_created_after_the_dump_has_zero_uptime() -> None:
    dump = SynthMinidump(time_date_stamp=10).add_misc_info(process_create_time=50).to_minidump()
    assert dump.process_uptime == 0


def test_misc_info_fields_absent_without_their_flag() -> None:
    dump = (
        SynthMinidump()
        .add_misc_info(process_id=5, flags1=0)
        .add_linux_proc_status("Pid:\t77\n")
        .to_minidump()
    )
    assert dump.process_id is None  # MiscInfo exists, so /proc/self/status is not consulted
    assert dump.process_uptime is None


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
def test_misc_info_version_follows_the_stream_size(version: int) -> None:
    misc = SynthMinidump().add_misc_info(process_id=1, version=version).to_minidump().misc_info
    assert misc is not None and misc.version == version and misc.process_id == 1
    assert (misc.time_zone_id is None) and (misc.process_cookie is None)


def test_misc_info_v5_time_zone_build_string_and_xstate() -> None:
    tz = (
        (480).to_bytes(4, "little", signed=True)
        + "Pacific Standard Time".encode("utf-16-le").ljust(64, b"\0")
        + bytes(16)
        + (0).to_bytes(4, "little")
        + "Pacific Daylight Time".encode("utf-16-le").ljust(64, b"\0")
        + bytes(16)
        + (-60).to_bytes(4, "little", signed=True)
    )
    extra = bytes(20) + (0).to_bytes(4, "little") * 3 + (2).to_bytes(4, "little") + tz
    extra += "10.0.22000.282".encode("utf-16-le").ljust(520, b"\0") + "dbgcore".encode("utf-16-le").ljust(
        80, b"\0"
    )
    features = bytearray(512)
    features[8 * 11 : 8 * 11 + 8] = (576).to_bytes(4, "little") + (16).to_bytes(4, "little")
    extra += (
        (1364 - 832).to_bytes(4, "little") + (0).to_bytes(4, "little") + ((1 << 11) | 1).to_bytes(8, "little")
    )
    extra += bytes(features) + (0xC00C1E).to_bytes(4, "little")
    misc = (
        SynthMinidump()
        .add_misc_info(version=5, flags1=0x1 | 0x40 | 0x100 | 0x200, process_id=3, extra=extra)
        .to_minidump()
        .misc_info
    )
    assert misc is not None
    assert misc.time_zone_id == 2 and misc.time_zone is not None and misc.time_zone.bias == 480
    assert misc.build_string == "10.0.22000.282" and misc.dbg_bld_str == "dbgcore"
    assert misc.xstate_enabled_features == (1 << 11) | 1
    assert misc.xstate_features is not None and misc.xstate_features[11] == (576, 16)
    assert misc.process_cookie == 0xC00C1E


def test_breakpad_info_validity_flags() -> None:
    info = SynthMinidump().add_breakpad_info(requesting_thread_id=7).to_minidump().breakpad_info
    assert info is not None and info.requesting_thread_id == 7 and info.dump_thread_id is None


def test_assertion_text_in_breakpads_form_and_rm_fields() -> None:
    dump = (
        SynthMinidump(os=Os.WINDOWS)
        .add_assertion(expression="x > 0", function="f", file="a.cc", line=12, kind=1)
        .to_minidump()
    )
    assertion = dump.assertion
    assert assertion is not None
    assert (assertion.expression, assertion.function, assertion.file, assertion.line) == (
        "x > 0",
        "f",
        "a.cc",
        12,
    )
    assert assertion.describe() == (
        "Invalid parameter passed to library function x > 0 in function f, in file a.cc at line 12"
    )
    pure = SynthMinidump().add_assertion(kind=2).to_minidump().assertion
    assert pure is not None and pure.describe() == "Pure virtual function called"
    odd = SynthMinidump().add_assertion(kind=9).to_minidump().assertion
    assert odd is not None and odd.describe() == "Unknown assertion type 0x00000009"


def test_short_system_info_is_a_problem_not_an_exception() -> None:
    dump = SynthMinidump(system_info=False).add_stream(StreamType.SystemInfoStream, bytes(20)).to_minidump()
    assert dump.system_info is None and dump.cpu is Cpu.UNKNOWN
    assert dump.problems[0].code == "StreamTruncated"


def test_time_formats() -> None:
    assert format_time_t(0x55832EDE) == "2015-06-18T20:49:34Z"
    assert format_time_t(0) == "1970-01-01T00:00:00Z"
    assert format_system_time((0, 11, 0, 1, 2, 0, 0, 0)) == "0000-11-01T02:00:00Z"
    assert format_system_time((2021, 2, 0, 29, 0, 0, 0, 0)) == "<invalid date>"
    assert format_system_time((2020, 2, 0, 29, 23, 59, 59, 500)) == "2020-02-29T23:59:59.5Z"
    assert format_system_time((0, 0, 0, 0, 0, 0, 0, 0)) == "<invalid date>"
