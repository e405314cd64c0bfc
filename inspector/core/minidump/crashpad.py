"""Crashpad's CrashpadInfo stream: report/client ids, simple annotations, per-module annotations."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from inspector.core.errors import MinidumpError
from inspector.core.minidump.errors import BadData, BadRva
from inspector.core.minidump.format import (
    ANNOTATION_TYPE_INVALID,
    ANNOTATION_TYPE_STRING,
    ANNOTATION_TYPE_USER_DEFINED,
    Location,
)
from inspector.core.minidump.modules import Guid
from inspector.core.minidump.reader import StreamContext, fit_count
from inspector.core.record import Record

CRASHPAD_INFO_SIZE = 52


class Annotation(Record):
    """A Crashpad annotation object; `value` is set for string annotations."""

    type: int
    value: str | None

    @property
    def kind(self) -> str:
        """ "string", "invalid", "user defined" or "unsupported"."""
        if self.type == ANNOTATION_TYPE_INVALID:
            return "invalid"
        if self.type == ANNOTATION_TYPE_STRING:
            return "string"
        if self.type >= ANNOTATION_TYPE_USER_DEFINED:
            return "user defined"
        return "unsupported"


class ModuleCrashpadInfo(Record):
    module_index: int
    version: int
    list_annotations: tuple[str, ...]
    simple_annotations: Mapping[str, str]
    annotation_objects: Mapping[str, Annotation]


class CrashpadInfo(Record):
    version: int
    report_id: Guid
    client_id: Guid
    simple_annotations: Mapping[str, str]
    modules: tuple[ModuleCrashpadInfo, ...]


def _counted(ctx: StreamContext, loc: Location, entry_size: int, what: str) -> tuple[memoryview, int]:
    """A Crashpad counted array: its bytes and how many whole entries they hold (0 if it is empty)."""
    source = ctx.source
    data = source.slice(loc.rva, loc.data_size, what)
    if not len(data):
        return data, 0
    if len(data) < 4:
        raise BadData(f"{what} at {loc.rva:#x} is shorter than its count", offset=loc.rva)
    claimed: int = source.struct("I").unpack_from(data, 0)[0]
    count = fit_count(claimed, len(data) - 4, entry_size)
    if count < claimed:
        ctx.report(BadData(f"{what} claims {claimed} entries but has room for {count}", offset=loc.rva))
    return data, count


def _string_dictionary(ctx: StreamContext, loc: Location, what: str) -> dict[str, str]:
    """A MINIDUMP_SIMPLE_STRING_DICTIONARY; unreadable entries are reported and left out."""
    source = ctx.source
    out: dict[str, str] = {}
    data, count = _counted(ctx, loc, 8, what)
    entry = source.struct("II")
    for i in range(count):
        key_rva, value_rva = entry.unpack_from(data, 4 + 8 * i)
        try:
            out[source.utf8_string(key_rva, terminated=True)] = source.utf8_string(value_rva, terminated=True)
        except (BadRva, BadData) as exc:
            ctx.report(type(exc)(f"{what}[{i}]: {exc.message}", offset=exc.offset))
    return out


def _string_list(ctx: StreamContext, loc: Location, what: str) -> list[str]:
    source = ctx.source
    data, count = _counted(ctx, loc, 4, what)
    out = []
    rva_of = source.struct("I")
    for i in range(count):
        rva = rva_of.unpack_from(data, 4 + 4 * i)[0]
        try:
            out.append(source.utf8_string(rva, terminated=True))
        except (BadRva, BadData) as exc:
            ctx.report(type(exc)(f"{what}[{i}]: {exc.message}", offset=exc.offset))
    return out


def _annotation_objects(ctx: StreamContext, loc: Location, what: str) -> dict[str, Annotation]:
    source = ctx.source
    out: dict[str, Annotation] = {}
    data, count = _counted(ctx, loc, 12, what)
    entry = source.struct("IHHI")
    for i in range(count):
        name_rva, kind, _, value_rva = entry.unpack_from(data, 4 + 12 * i)
        try:
            name = source.utf8_string(name_rva, terminated=True)
            value = (
                source.utf8_string(value_rva, terminated=False) if kind == ANNOTATION_TYPE_STRING else None
            )
        except (BadRva, BadData) as exc:
            ctx.report(type(exc)(f"{what}[{i}]: {exc.message}", offset=exc.offset))
            continue
        out[name] = Annotation(kind, value)
    return out


def parse_crashpad_info(ctx: StreamContext) -> CrashpadInfo:
    source = ctx.source
    cur = ctx.cursor()
    version = cur.u32("crashpad info version")
    report_id = Guid.from_bytes(bytes(cur.take(16, "report id")), source.endian)
    client_id = Guid.from_bytes(bytes(cur.take(16, "client id")), source.endian)
    simple_loc = Location(*cur.unpack("II", "simple annotations location"))
    modules_loc = Location(*cur.unpack("II", "module list location"))
    if version == 0:
        ctx.report(BadData("CrashpadInfo version 0 is invalid", offset=ctx.offset))
    simple: dict[str, str] = {}
    try:
        simple = _string_dictionary(ctx, simple_loc, "simple annotations")
    except MinidumpError as exc:
        ctx.report(exc)
    modules = []
    try:
        links, count = _counted(ctx, modules_loc, 12, "module crashpad info list")
        link = source.struct("III")
        for i in range(count):
            index, _size, rva = link.unpack_from(links, 4 + 12 * i)
            what = f"module_list[{i}]"
            try:
                mod_version, *locs = source.unpack("IIIIIII", rva, what)
                lists = _string_list(ctx, Location(locs[0], locs[1]), f"{what}.list_annotations")
                simples = _string_dictionary(ctx, Location(locs[2], locs[3]), f"{what}.simple_annotations")
                objects = _annotation_objects(ctx, Location(locs[4], locs[5]), f"{what}.annotation_objects")
            except MinidumpError as exc:
                ctx.report(exc)
                continue
            modules.append(
                ModuleCrashpadInfo(
                    index,
                    mod_version,
                    tuple(lists),
                    MappingProxyType(dict(sorted(simples.items()))),
                    MappingProxyType(dict(sorted(objects.items()))),
                )
            )
    except MinidumpError as exc:
        ctx.report(exc)
    return CrashpadInfo(
        version, report_id, client_id, MappingProxyType(dict(sorted(simple.items()))), tuple(modules)
    )
