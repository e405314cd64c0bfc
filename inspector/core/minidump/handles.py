"""HandleData stream: the process's open handles (Windows) or file descriptors."""

from __future__ import annotations

from inspector.core.minidump.errors import BadData, BadRva
from inspector.core.minidump.format import HANDLE_OBJECT_INFORMATION_TYPES
from inspector.core.minidump.reader import StreamContext, fit_count
from inspector.core.record import Record

HANDLE_DESCRIPTOR_SIZE = 32
HANDLE_DESCRIPTOR_2_SIZE = 40
#: Bound on an object-information chain (the format allows cycles).
MAX_OBJECT_INFOS = 256


class HandleObjectInfo(Record):
    next_info_rva: int
    info_type: int
    size_of_info: int

    @property
    def type_name(self) -> str:
        if self.info_type < len(HANDLE_OBJECT_INFORMATION_TYPES):
            return HANDLE_OBJECT_INFORMATION_TYPES[self.info_type]
        return f"unknown({self.info_type})"


class HandleDescriptor(Record):
    """MINIDUMP_HANDLE_DESCRIPTOR(_2); `object_info_rva` is None for version 1 descriptors."""

    handle: int
    type_name_rva: int
    object_name_rva: int
    attributes: int
    granted_access: int
    handle_count: int
    pointer_count: int
    object_info_rva: int | None
    type_name: str | None
    object_name: str | None
    object_infos: tuple[HandleObjectInfo, ...]


class HandleData(Record):
    handles: tuple[HandleDescriptor, ...]

    def __len__(self) -> int:
        return len(self.handles)


def _optional_string(ctx: StreamContext, rva: int) -> str | None:
    if not rva:
        return None
    try:
        return ctx.source.utf16_string(rva)
    except (BadRva, BadData):
        return None


def parse_handle_data(ctx: StreamContext) -> HandleData:
    source = ctx.source
    header_size, descriptor_size, claimed = ctx.cursor().unpack("III", "handle data header")
    if descriptor_size not in (HANDLE_DESCRIPTOR_SIZE, HANDLE_DESCRIPTOR_2_SIZE):
        ctx.report(
            BadData(
                f"handle descriptors of {descriptor_size} bytes are not a known version", offset=ctx.offset
            )
        )
        return HandleData(())
    count = fit_count(claimed, ctx.size - header_size, descriptor_size)
    if count < claimed:
        ctx.report(BadData(f"handle data claims {claimed} descriptors but {count} fit", offset=ctx.offset))
    record = source.struct("QIIIIII" + ("II" if descriptor_size == HANDLE_DESCRIPTOR_2_SIZE else ""))
    info_record = source.struct("III")
    handles = []
    first = ctx.offset + header_size
    for i, f in enumerate(record.iter_unpack(source.data[first : first + count * descriptor_size])):
        infos: list[HandleObjectInfo] = []
        info_rva = f[7] if descriptor_size == HANDLE_DESCRIPTOR_2_SIZE else None
        next_rva = info_rva or 0
        while next_rva and len(infos) < MAX_OBJECT_INFOS:
            if not source.has(next_rva, info_record.size):
                break
            info = HandleObjectInfo(*info_record.unpack_from(source.data, next_rva))
            if info.info_type >= len(HANDLE_OBJECT_INFORMATION_TYPES):
                ctx.note(f"handle[{i}] object information has unknown type {info.info_type}", offset=next_rva)
                break
            infos.append(info)
            next_rva = info.next_info_rva
        handle, type_rva, name_rva, attributes, access, handle_count, pointer_count = f[:7]
        handles.append(
            HandleDescriptor(
                handle,
                type_rva,
                name_rva,
                attributes,
                access,
                handle_count,
                pointer_count,
                info_rva,
                _optional_string(ctx, type_rva),
                _optional_string(ctx, name_rva),
                tuple(infos),
            )
        )
    return HandleData(tuple(handles))
