"""Mozilla's extension streams: macOS crash info and boot args, Linux resource limits, soft errors."""

from __future__ import annotations

import json

from inspector.core.errors import MinidumpError
from inspector.core.minidump.errors import BadData, BadRva
from inspector.core.minidump.format import Location
from inspector.core.minidump.reader import StreamContext
from inspector.core.record import Record

MAC_CRASH_INFO_HEADER_SIZE = 172
MAC_CRASH_INFO_MAX_RECORDS = 20
_FIXED_SIZES = {1: 16, 4: 32, 5: 40}
_STRING_FIELDS = ("module_path", "message", "signature_string", "backtrace", "message2")


class MacCrashRecord(Record):
    """One crash-info record of macOS's `__crash_info` section (fields absent in older versions are None)."""

    stream_type: int
    version: int
    thread: int | None = None
    dialog_mode: int | None = None
    abort_cause: int | None = None
    module_path: str | None = None
    message: str | None = None
    signature_string: str | None = None
    backtrace: str | None = None
    message2: str | None = None

    def value(self, name: str) -> int | str | None:
        """A field as rust-minidump's accessors give it: None when absent, zero or empty."""
        value: int | str | None = getattr(self, name)
        return value or None


class MacCrashInfo(Record):
    stream_type: int
    record_count: int
    record_start_size: int
    records: tuple[MacCrashRecord, ...]


class MacBootargs(Record):
    stream_type: int
    bootargs_rva: int
    bootargs: str | None


class ProcLimit(Record):
    name: str
    soft: int | str
    hard: int | str
    unit: str


class LinuxLimits(Record):
    """/proc/self/limits as Mozilla's crash reporter stores it."""

    raw: bytes

    def limits(self) -> list[ProcLimit]:
        """Rows as rust-minidump reads them: columns split on two spaces; 'unlimited', a number, or 0."""

        def limit(text: str) -> int | str:
            text = text.strip()
            if text == "unlimited":
                return "unlimited"
            return int(text) if text.isdigit() and text.isascii() else 0

        rows = [line for line in self.raw.decode("utf-8", errors="replace").split("\n") if line][1:]
        out = []
        for row in rows:
            cols = [c for c in row.split("  ") if c]
            if len(cols) < 3:
                continue
            unit = cols[3].strip() if len(cols) > 3 else "n/a"
            out.append(ProcLimit(cols[0].strip(), limit(cols[1]), limit(cols[2]), unit))
        return out


class SoftErrors(Record):
    """Mozilla's soft-error list: JSON text written by the crash reporter."""

    text: str

    @property
    def value(self) -> object:
        """The parsed JSON, None when the text is not JSON."""
        try:
            parsed: object = json.loads(self.text)
        except ValueError:
            return None
        return parsed


def parse_mac_crash_info(ctx: StreamContext) -> MacCrashInfo:
    source = ctx.source
    cur = ctx.cursor()
    stream_type, record_count, record_start_size = cur.unpack("III", "mac crash info header")
    locations = cur.unpack("40I", "mac crash info record locations")
    records = []
    version_seen = None
    for i in range(min(record_count, MAC_CRASH_INFO_MAX_RECORDS)):
        loc = Location(locations[2 * i], locations[2 * i + 1])
        try:
            data = source.slice(loc.rva, loc.data_size, f"mac crash info record[{i}]")
            if len(data) < 16:
                raise BadData(f"mac crash info record[{i}] has {len(data)} bytes", offset=loc.rva)
            base = source.struct("QQ").unpack_from(data, 0)
            record_type, version = base
            if version_seen is not None and version != version_seen:
                raise BadData(
                    f"mac crash info records have versions {version_seen} and {version}", offset=loc.rva
                )
            version_seen = version
            known = max((v for v in _FIXED_SIZES if version >= v), default=None)
            if known is None:
                ctx.note(f"mac crash info record[{i}] has version {version}", offset=loc.rva)
                continue
            fixed = _FIXED_SIZES[known]
            if fixed > len(data) or fixed > record_start_size:
                raise BadData(f"mac crash info record[{i}] is shorter than its fixed part", offset=loc.rva)
            ints = source.struct(f"{fixed // 8}Q").unpack_from(data, 0)
            strings: dict[str, str] = {}
            if known >= 4:
                pos = record_start_size
                for name in _STRING_FIELDS:
                    end = bytes(data[pos:]).find(b"\0") if pos <= len(data) else -1
                    if end < 0:
                        raise BadData(
                            f"mac crash info record[{i}] {name} is not NUL-terminated", offset=loc.rva
                        )
                    strings[name] = bytes(data[pos : pos + end]).decode("utf-8")
                    pos += end + 1
            records.append(
                MacCrashRecord(
                    record_type,
                    version,
                    thread=ints[2] if known >= 4 else None,
                    dialog_mode=ints[3] if known >= 4 else None,
                    abort_cause=ints[4] if known >= 5 else None,
                    **strings,
                )
            )
        except (MinidumpError, UnicodeDecodeError) as exc:
            if isinstance(exc, MinidumpError):
                ctx.report(exc)
            else:
                ctx.report(BadData(f"mac crash info record[{i}] string is not UTF-8", offset=loc.rva))
            break
    return MacCrashInfo(stream_type, record_count, record_start_size, tuple(records))


def parse_mac_bootargs(ctx: StreamContext) -> MacBootargs:
    stream_type, rva = ctx.cursor().unpack("IQ", "mac boot args")
    bootargs: str | None
    try:
        bootargs = ctx.source.utf16_string(rva)
    except (BadRva, BadData) as exc:
        ctx.report(exc, rejects=False)
        bootargs = None
    return MacBootargs(stream_type, rva, bootargs)


def parse_soft_errors(ctx: StreamContext) -> SoftErrors | None:
    try:
        return SoftErrors(bytes(ctx.data).decode("utf-8"))
    except UnicodeDecodeError:
        ctx.report(BadData("soft errors are not UTF-8 text", offset=ctx.offset))
        return None
