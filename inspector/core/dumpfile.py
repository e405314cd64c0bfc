"""Open a crash dump whatever its format: a minidump, or a microdump in a log. Decided by content.

`open_any_dump(path)` is the one entry point the command line, the window and batch tools
use. `sniff_dump_kind(first_bytes)` answers cheaply from a file's first bytes (a few
kilobytes): a minidump starts with its signature; a microdump is text whose BEGIN line may
follow other log lines (a microdump deep inside a long logcat is still found by
`open_any_dump`, which looks at the whole file when the start is not a minidump's).
"""

from __future__ import annotations

import mmap
import os
import sys

from inspector.core.enums import Enum
from inspector.core.errors import MinidumpError
from inspector.core.minidump import Minidump
from inspector.core.minidump.errors import UnreadableFile
from inspector.core.minidump.reader import check_openable, file_bytes, open_for_reading, read_up_to
from inspector.core.types import path_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from inspector.core.microdump.dump import Microdump

#: The microdump reader's module: imported only when a microdump is opened.
_READER = "inspector.core.microdump.dump"

#: How much of a file `sniff_dump_kind` needs to see.
SNIFF_BYTES = 64 * 1024


class DumpKind(Enum):
    MINIDUMP = "minidump"
    MICRODUMP = "microdump"
    UNKNOWN = "unknown"


def sniff_dump_kind(head: bytes | bytearray | memoryview) -> DumpKind:
    """What the first bytes of a file look like (`SNIFF_BYTES` of them are plenty)."""
    start = bytes(head[:4])
    if start in (b"MDMP", b"PMDM"):
        return DumpKind.MINIDUMP
    from inspector.core.microdump.log import is_microdump  # a minidump never loads the log reader

    if is_microdump(head):
        return DumpKind.MICRODUMP
    return DumpKind.UNKNOWN


def open_any_dump(path: str | os.PathLike[str], *, microdump_index: int | None = None) -> Minidump:
    """Open a minidump, or microdump number `microdump_index` of a log (None: the first that holds records).

    Anything that is not recognisably a microdump goes to `Minidump.open`, whose errors say
    what the file is instead. Raises `MinidumpError` subclasses, as `Minidump.open` does.
    """
    p = path_text(path)
    check_openable(p, "dump")
    whole, mapping = file_bytes(p)  # read (or mapped) once, for the common case
    if whole[:4].tobytes() in (b"MDMP", b"PMDM"):
        return Minidump.from_file_bytes(p, whole, mapping)  # the log reader is not even imported
    whole.release()
    if mapping is not None:
        mapping.close()
    head = _head(p, SNIFF_BYTES)
    from inspector.core.microdump.log import mentions_microdump

    if not (mentions_microdump(head) or _later_mentions_microdump(p)):
        return Minidump.open(p)
    from inspector.core.microdump.dump import Microdump

    try:
        with open(p, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise UnreadableFile(f"{p}: cannot read ({exc.strerror or exc})") from None
    try:
        return Microdump(memoryview(data), path=p, index=microdump_index)
    except MinidumpError as exc:
        raise type(exc)(f"{p}: {exc.message}", offset=exc.offset) from None


def as_microdump(dump: Minidump) -> Microdump | None:
    """`dump` if it is a microdump, else None: without importing the reader when none was read."""
    reader = sys.modules.get(_READER)
    if reader is None:  # no microdump was ever opened, so this is none
        return None
    microdump: Microdump | None = dump if isinstance(dump, reader.Microdump) else None
    return microdump


def _head(p: str, size: int) -> bytes:
    """The file's first `size` bytes; the same errors as `Minidump.open` for what cannot be opened."""
    check_openable(p, "dump")
    fd = open_for_reading(p)
    try:
        return read_up_to(fd, size)
    except OSError as exc:
        raise UnreadableFile(f"{p}: cannot open ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def _later_mentions_microdump(p: str) -> bool:
    """A microdump's BEGIN or END line past the head (a long logcat before it)."""
    from inspector.core.microdump.log import BEGIN, END

    try:
        if os.stat(p).st_size <= SNIFF_BYTES:
            return False  # the head was the whole file
        with open(p, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            return mapped.find(BEGIN.encode()) >= 0 or mapped.find(END.encode()) >= 0
    except (OSError, ValueError):
        return False
