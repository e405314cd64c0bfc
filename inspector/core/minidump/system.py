"""SystemInfo, MiscInfo, BreakpadInfo and AssertionInfo streams.

The derived strings (`os_name`, `os_ver`, `cpu_arch`, `cpu_info`) are exactly
the `system_info` values of rust-minidump's JSON report.
"""

from __future__ import annotations

from inspector.core.minidump.errors import BadData, BadRva
from inspector.core.minidump.format import BreakpadInfoValid, MiscInfoFlag, PlatformId, ProcessorArchitecture
from inspector.core.minidump.reader import StreamContext, rust_trim
from inspector.core.record import Record
from inspector.core.types import Cpu, Os

SYSTEM_INFO_SIZE = 56
MISC_INFO_SIZES = {1: 24, 2: 44, 3: 232, 4: 832, 5: 1364}
BREAKPAD_INFO_SIZE = 12
ASSERTION_INFO_SIZE = 776

_CPU_BY_ARCH: dict[int, Cpu] = {
    ProcessorArchitecture.INTEL: Cpu.X86,
    ProcessorArchitecture.IA32_ON_WIN64: Cpu.X86,
    ProcessorArchitecture.AMD64: Cpu.AMD64,
    ProcessorArchitecture.PPC: Cpu.PPC,
    ProcessorArchitecture.PPC64: Cpu.PPC64,
    ProcessorArchitecture.SPARC: Cpu.SPARC,
    ProcessorArchitecture.ARM: Cpu.ARM,
    ProcessorArchitecture.ARM64: Cpu.ARM64,
    ProcessorArchitecture.ARM64_OLD: Cpu.ARM64,
    ProcessorArchitecture.MIPS: Cpu.MIPS,
    ProcessorArchitecture.MIPS64: Cpu.MIPS64,
}

_OS_BY_PLATFORM: dict[int, Os] = {
    PlatformId.WIN32_WINDOWS: Os.WINDOWS,
    PlatformId.WIN32_NT: Os.WINDOWS,
    PlatformId.MACOS: Os.MACOS,
    PlatformId.IOS: Os.IOS,
    PlatformId.LINUX: Os.LINUX,
    PlatformId.SOLARIS: Os.SOLARIS,
    PlatformId.ANDROID: Os.ANDROID,
    PlatformId.PS3: Os.PS3,
    PlatformId.NACL: Os.NACL,
    PlatformId.FUCHSIA: Os.FUCHSIA,
}

# rust-minidump has no Fuchsia: it prints such a dump's OS as an unknown id.
_RM_NAMED_OS = frozenset(_OS_BY_PLATFORM.values()) - {Os.FUCHSIA}

_ARM_VENDORS = {0x41: "ARM", 0x51: "Qualcomm", 0x56: "Marvell", 0x69: "Intel/Marvell"}
_ARM_PARTS = {
    0x4100C050: "Cortex-A5",
    0x4100C080: "Cortex-A8",
    0x4100C090: "Cortex-A9",
    0x4100C0F0: "Cortex-A15",
    0x4100C140: "Cortex-R4",
    0x4100C150: "Cortex-R5",
    0x4100B360: "ARM1136",
    0x4100B560: "ARM1156",
    0x4100B760: "ARM1176",
    0x4100B020: "ARM11-MPCore",
    0x41009260: "ARM926",
    0x41009460: "ARM946",
    0x41009660: "ARM966",
    0x510006F0: "Krait",
    0x510000F0: "Scorpion",
}
# ELF HWCAP bits for 32-bit ARM, in the order rust-minidump lists them.
_ARM_HWCAPS = (
    (1 << 0, "swp"),
    (1 << 1, "half"),
    (1 << 2, "thumb"),
    (1 << 3, "26bit"),
    (1 << 4, "fastmult"),
    (1 << 5, "fpa"),
    (1 << 6, "vfpv2"),
    (1 << 7, "edsp"),
    (1 << 8, "java"),
    (1 << 9, "iwmmxt"),
    (1 << 10, "crunch"),
    (1 << 11, "thumbee"),
    (1 << 12, "neon"),
    (1 << 13, "vfpv3"),
    (1 << 14, "vfpv3d16"),
    (1 << 15, "tls"),
    (1 << 16, "vfpv4"),
    (1 << 17, "idiva"),
    (1 << 18, "idivt"),
)
_ARM_HWCAP_KNOWN = (1 << 22) - 1  # bits rust-minidump's flag type keeps (up to EVTSTRM)


class SystemInfo(Record):
    """MINIDUMP_SYSTEM_INFO plus the strings rust-minidump derives from it."""

    processor_architecture: int
    processor_level: int
    processor_revision: int
    number_of_processors: int
    product_type: int
    major_version: int
    minor_version: int
    build_number: int
    platform_id: int
    csd_version_rva: int
    suite_mask: int
    cpu_data: bytes
    csd_version: str | None

    @property
    def os(self) -> Os:
        return _OS_BY_PLATFORM.get(self.platform_id, Os.UNKNOWN)

    @property
    def cpu(self) -> Cpu:
        return _CPU_BY_ARCH.get(self.processor_architecture, Cpu.UNKNOWN)

    @property
    def os_name(self) -> str:
        """JSON `system_info.os` ("Windows NT", "Linux", "Mac OS X", …; odd form for unknown ids)."""
        os = self.os
        if os in _RM_NAMED_OS:
            return os.value
        return f"0x{self.platform_id:#08x}"

    @property
    def cpu_arch(self) -> str:
        """JSON `system_info.cpu_arch` ("x86", "amd64", "arm64", … or "unknown")."""
        return self.cpu.value

    @property
    def cpu_count(self) -> int:
        return self.number_of_processors

    @property
    def cpu_vendor(self) -> str | None:
        """The x86 CPUID vendor string ("GenuineIntel"), when the dump is x86."""
        if self.cpu is not Cpu.X86:
            return None
        return "".join(chr(b) for b in self.cpu_data[:12])

    @property
    def cpu_family(self) -> int:
        return self.processor_level

    @property
    def cpu_model(self) -> int:
        return (self.processor_revision >> 8) & 0xFF

    @property
    def cpu_stepping(self) -> int:
        return self.processor_revision & 0xFF

    @property
    def cpu_info(self) -> str | None:
        """JSON `system_info.cpu_info`, built from the CPU fields as rust-minidump does."""
        cpu = self.cpu
        if cpu in (Cpu.X86, Cpu.AMD64):
            text = f"family {self.processor_level} model {self.cpu_model} stepping {self.cpu_stepping}"
            return f"{self.cpu_vendor} {text}" if cpu is Cpu.X86 else text
        if cpu is Cpu.ARM:
            return self._arm_cpu_info()
        return None

    def _arm_cpu_info(self) -> str:
        cpuid = int.from_bytes(self.cpu_data[0:4], "little")
        hwcaps = int.from_bytes(self.cpu_data[4:8], "little") & _ARM_HWCAP_KNOWN
        text = f"ARMv{self.processor_level}"
        if cpuid:
            vendor_id = (cpuid >> 24) & 0xFF
            part_id = cpuid & 0xFF00FFF0
            vendor = _ARM_VENDORS.get(vendor_id)
            text += f" {vendor}" if vendor else f" vendor({vendor_id:#x})"
            part = _ARM_PARTS.get(part_id)
            text += f" {part}" if part else f" part({part_id:#x})"
        if hwcaps:
            text += " features: " + ",".join(name for bit, name in _ARM_HWCAPS if hwcaps & bit)
        return text

    @property
    def os_parts(self) -> tuple[str, str | None]:
        """(version, build) as rust-minidump's `os_parts` (Linux: parsed from `uname -srvmo` text)."""
        version = f"{self.major_version}.{self.minor_version}.{self.build_number}"
        build = rust_trim(self.csd_version) if self.csd_version is not None else None
        build = build or None
        if self.platform_id != PlatformId.LINUX or version != "0.0.0":
            return version, build
        parts = (self.csd_version or "").split(" ")
        uname_version = parts[1] if len(parts) > 1 else "0.0.0"
        rest = parts[2:]
        if rest:
            last = rest.pop()
            if last == "Linux/GNU" and rest:
                rest.pop()
        if uname_version == "0.0.0":
            return version, build
        return uname_version, " ".join(rest)

    @property
    def os_ver(self) -> str:
        """JSON `system_info.os_ver`: version, then the build after a space when there is one."""
        version, build = self.os_parts
        return f"{version} {build}" if build is not None else version


class TimeZone(Record):
    bias: int
    standard_name: tuple[int, ...]
    standard_date: tuple[int, ...]
    standard_bias: int
    daylight_name: tuple[int, ...]
    daylight_date: tuple[int, ...]
    daylight_bias: int


class MiscInfo(Record):
    """MINIDUMP_MISC_INFO v1–v5; a field is None when the stream is too old for it or its flag is clear."""

    version: int
    size_of_info: int
    flags1: int
    raw_process_id: int
    raw_process_create_time: int
    raw_process_user_time: int
    raw_process_kernel_time: int
    processor_power: tuple[int, ...] | None = None
    process_integrity_level_raw: int | None = None
    process_execute_flags_raw: int | None = None
    protected_process_raw: int | None = None
    time_zone_id_raw: int | None = None
    time_zone_raw: TimeZone | None = None
    build_string_raw: tuple[int, ...] | None = None
    dbg_bld_str_raw: tuple[int, ...] | None = None
    xstate_size_of_info: int | None = None
    xstate_context_size: int | None = None
    xstate_enabled_features: int | None = None
    xstate_features: tuple[tuple[int, int], ...] | None = None
    process_cookie_raw: int | None = None

    def _flag(self, flag: MiscInfoFlag) -> bool:
        return bool(self.flags1 & flag)

    @property
    def process_id(self) -> int | None:
        return self.raw_process_id if self._flag(MiscInfoFlag.PROCESS_ID) else None

    @property
    def process_create_time(self) -> int | None:
        """Seconds since the Unix epoch, when the dump recorded process times."""
        return self.raw_process_create_time if self._flag(MiscInfoFlag.PROCESS_TIMES) else None

    @property
    def process_user_time(self) -> int | None:
        return self.raw_process_user_time if self._flag(MiscInfoFlag.PROCESS_TIMES) else None

    @property
    def process_kernel_time(self) -> int | None:
        return self.raw_process_kernel_time if self._flag(MiscInfoFlag.PROCESS_TIMES) else None

    def processor_power_field(self, index: int) -> int | None:
        """index 0..4: max mhz, current mhz, mhz limit, max idle state, current idle state."""
        if self.processor_power is None or not self._flag(MiscInfoFlag.PROCESSOR_POWER_INFO):
            return None
        return self.processor_power[index]

    def _v3(self, value: int | None, flag: MiscInfoFlag) -> int | None:
        return value if value is not None and self._flag(flag) else None

    @property
    def process_integrity_level(self) -> int | None:
        return self._v3(self.process_integrity_level_raw, MiscInfoFlag.PROCESS_INTEGRITY)

    @property
    def process_execute_flags(self) -> int | None:
        return self._v3(self.process_execute_flags_raw, MiscInfoFlag.PROCESS_EXECUTE_FLAGS)

    @property
    def protected_process(self) -> int | None:
        return self._v3(self.protected_process_raw, MiscInfoFlag.PROTECTED_PROCESS)

    @property
    def time_zone_id(self) -> int | None:
        return self._v3(self.time_zone_id_raw, MiscInfoFlag.TIMEZONE)

    @property
    def time_zone(self) -> TimeZone | None:
        return self.time_zone_raw if self._flag(MiscInfoFlag.TIMEZONE) else None

    @property
    def build_string(self) -> str | None:
        if self.build_string_raw is None or not self._flag(MiscInfoFlag.BUILDSTRING):
            return None
        return utf16_units_to_string(self.build_string_raw)

    @property
    def dbg_bld_str(self) -> str | None:
        if self.dbg_bld_str_raw is None or not self._flag(MiscInfoFlag.BUILDSTRING):
            return None
        return utf16_units_to_string(self.dbg_bld_str_raw)

    @property
    def process_cookie(self) -> int | None:
        return self._v3(self.process_cookie_raw, MiscInfoFlag.PROCESS_COOKIE)

    def process_uptime(self, dump_time: int) -> int | None:
        """Seconds from process creation to `dump_time` (the header's time stamp); 0 if creation is later."""
        created = self.process_create_time
        return None if created is None else max(0, dump_time - created)


def utf16_units_to_string(units: tuple[int, ...]) -> str | None:
    """A fixed UTF-16 array up to its first NUL; None when it is not valid UTF-16."""
    end = units.index(0) if 0 in units else len(units)
    raw = b"".join(u.to_bytes(2, "little") for u in units[:end])
    try:
        return raw.decode("utf-16-le")
    except UnicodeDecodeError:
        return None


class BreakpadInfo(Record):
    validity: int
    raw_dump_thread_id: int
    raw_requesting_thread_id: int

    @property
    def dump_thread_id(self) -> int | None:
        return self.raw_dump_thread_id if self.validity & BreakpadInfoValid.DUMP_THREAD_ID else None

    @property
    def requesting_thread_id(self) -> int | None:
        return (
            self.raw_requesting_thread_id if self.validity & BreakpadInfoValid.REQUESTING_THREAD_ID else None
        )


class AssertionInfo(Record):
    """Breakpad's MDRawAssertionInfo (invalid-parameter / pure-virtual-call handlers on Windows)."""

    expression_units: tuple[int, ...]
    function_units: tuple[int, ...]
    file_units: tuple[int, ...]
    line: int
    type: int

    @property
    def expression(self) -> str | None:
        return utf16_units_to_string(self.expression_units)

    @property
    def function(self) -> str | None:
        return utf16_units_to_string(self.function_units)

    @property
    def file(self) -> str | None:
        return utf16_units_to_string(self.file_units)

    def describe(self) -> str:
        """Breakpad's assertion text ("Invalid parameter passed to library function in function f, …").

        rust-minidump (0.25) always reports `crash_info.assertion` as null; this
        is the text Breakpad's processor builds, for the human report.
        """
        if self.type == 1:
            text = "Invalid parameter passed to library function"
        elif self.type == 2:
            text = "Pure virtual function called"
        else:
            text = f"Unknown assertion type 0x{self.type:08x}"
        if self.expression:
            text += " " + self.expression
        if self.function:
            text += " in function " + self.function
        if self.file:
            text += ", in file " + self.file
        if self.line:
            text += f" at line {self.line}"
        return text


def parse_system_info(ctx: StreamContext) -> SystemInfo:
    source = ctx.source
    cur = ctx.cursor()
    arch, level, revision, nproc, product, major, minor, build, platform, csd_rva, suite, _ = cur.unpack(
        "HHHBBIIIIIHH", "system info"
    )
    cpu_data = bytes(cur.take(24, "system info CPU data"))
    csd: str | None
    try:
        csd = source.utf16_string(csd_rva)
    except (BadRva, BadData) as exc:
        if csd_rva:
            ctx.report(type(exc)(f"CSD version string: {exc.message}", offset=exc.offset), rejects=False)
        csd = None
    return SystemInfo(
        arch, level, revision, nproc, product, major, minor, build, platform, csd_rva, suite, cpu_data, csd
    )


def parse_misc_info(ctx: StreamContext) -> MiscInfo:
    """The largest MiscInfo version that fits in the stream (as rust-minidump chooses it)."""
    size = ctx.size
    version = max((v for v, s in MISC_INFO_SIZES.items() if size >= s), default=0)
    cur = ctx.cursor()
    if version == 0:
        cur.need(MISC_INFO_SIZES[1], "misc info")
    base = cur.unpack("6I", "misc info")
    info: dict[str, object] = {}
    if version >= 2:
        info["processor_power"] = cur.unpack("5I", "misc info v2")
    if version >= 3:
        integ, execf, protected, tz_id = cur.unpack("4I", "misc info v3")
        tz = cur.unpack("i32H8Hi32H8Hi", "time zone")
        info.update(
            process_integrity_level_raw=integ,
            process_execute_flags_raw=execf,
            protected_process_raw=protected,
            time_zone_id_raw=tz_id,
            time_zone_raw=TimeZone(tz[0], tz[1:33], tz[33:41], tz[41], tz[42:74], tz[74:82], tz[82]),
        )
    if version >= 4:
        info["build_string_raw"] = cur.unpack("260H", "build string")
        info["dbg_bld_str_raw"] = cur.unpack("40H", "debug build string")
    if version >= 5:
        size_of_info, context_size, enabled = cur.unpack("IIQ", "xstate config")
        feats = cur.unpack("128I", "xstate features")
        info.update(
            xstate_size_of_info=size_of_info,
            xstate_context_size=context_size,
            xstate_enabled_features=enabled,
            xstate_features=tuple(zip(feats[0::2], feats[1::2], strict=True)),
            process_cookie_raw=cur.u32("process cookie"),
        )
    return MiscInfo(version, *base, **info)  # type: ignore[arg-type]


def parse_breakpad_info(ctx: StreamContext) -> BreakpadInfo:
    return BreakpadInfo(*ctx.cursor().unpack("III", "breakpad info"))


def parse_assertion_info(ctx: StreamContext) -> AssertionInfo:
    f = ctx.cursor().unpack("128H128H128HII", "assertion info")
    return AssertionInfo(f[0:128], f[128:256], f[256:384], f[384], f[385])


def format_time_t(value: int) -> str:
    """RFC 3339 UTC time of a Unix time stamp, as rust-minidump prints header and module times."""
    import datetime  # imported when a time is printed, not by every reader of a dump

    moment = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(seconds=value)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


def format_system_time(fields: tuple[int, ...]) -> str:
    """A SYSTEMTIME (year, month, weekday, day, hour, minute, second, ms) as RFC 3339, or "<invalid date>"."""
    year, month, _, day, hour, minute, second, millis = fields
    if not (
        year <= 9999
        and 1 <= month <= 12
        and 1 <= day <= _days_in_month(year, month)
        and hour < 24
        and minute < 60
        and second < 60
        and millis < 1000
    ):
        return "<invalid date>"
    text = f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}"
    if millis:
        text += "." + f"{millis:03d}".rstrip("0")
    return text + "Z"
