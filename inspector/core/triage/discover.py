"""Finding the dumps of a batch: files named on the command line, and folders searched by content.

Inside a folder a file is a dump when its first bytes say so (`dump_kind`: a minidump, or a
log whose first 64 KiB hold a Breakpad microdump), whatever its name. Files there that are
not dumps are passed over quietly (symbol files, other logs), except what a triage engineer
would expect to be a dump: a file named like one (`.dmp`, `.mdmp`) that is not, a directory
named like one, and files or folders that cannot be read at all (nothing can be said about
their content). Those are handed on as they are,
so that the triage reports each with why it could not be read instead of losing it.

Each dump also gets a routing key, the identity (CodeView record) of its main module
read straight from the module list: sorting a batch by it puts dumps of the same build
next to each other, so one worker process sees them one after another with the same
symbol files already open.
"""

from __future__ import annotations

import os
import stat
import struct
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from inspector.core.dumpfile import SNIFF_BYTES, DumpKind, sniff_dump_kind
from inspector.core.record import Record

#: Names a crash reporter gives minidumps; a file named so that is not one is reported.
DUMP_SUFFIXES = (".dmp", ".mdmp")

MINIDUMP = DumpKind.MINIDUMP.value


def dump_kind(head: bytes) -> str | None:
    """The kind of crash dump a file is from its first bytes (`DumpKind` value), or None.

    `inspector.core.dumpfile.sniff_dump_kind` decides, as for every other way a dump is
    opened: a minidump, or a log holding a Breakpad microdump.
    """
    kind = sniff_dump_kind(head)
    return None if kind is DumpKind.UNKNOWN else kind.value


class FoundDump(Record):
    """A path to triage, as found (the input joined with the path inside a folder).

    `kind`: what `dump_kind` says (None: not a dump by its content, or unreadable: the
    triage reports why). `route`: the main module's identity, for routing (may be empty).
    `problem`: set when the path cannot even be looked at as a file (a folder that cannot
    be listed); the triage reports it as it is.
    """

    path: str
    kind: str | None = None
    route: bytes = b""
    problem: str | None = None


def find_dumps(inputs: Iterable[str | os.PathLike[str]]) -> Iterator[FoundDump]:
    """Every dump under `inputs`, in a stable order (inputs in order, folders sorted by name).

    A file named directly is always triaged (it is reported if it is not a dump); a
    missing input too (the triage says it does not exist).
    """
    for item in inputs:
        path = os.fspath(item)
        if os.path.isdir(path):
            yield from _search(path)
        else:
            yield _look(path)


def _search(folder: str) -> Iterator[FoundDump]:
    problems: list[OSError] = []
    # os.walk does not follow symbolic links to folders, so a link loop cannot trap it
    for root, dirs, files in os.walk(folder, onerror=problems.append):
        yield from _unlisted(problems, folder)
        dirs.sort()
        for name in dirs:
            if name.lower().endswith(DUMP_SUFFIXES):
                yield FoundDump(os.path.join(root, name))  # its content is searched too
        for name in sorted(files):
            found = _look(os.path.join(root, name))
            if found.kind is not None or found.route == _UNREADABLE or name.lower().endswith(DUMP_SUFFIXES):
                yield found
    yield from _unlisted(problems, folder)


def _unlisted(problems: list[OSError], folder: str) -> Iterator[FoundDump]:
    """The folders os.walk could not list (reported as it met them)."""
    for error in problems:
        where = error.filename if isinstance(error.filename, str) else folder
        yield FoundDump(where, problem=f"{where}: cannot list the folder ({error.strerror or error})")
    problems.clear()


def holds_dumps(folder: str | os.PathLike[str], *, look_at: int = 256) -> bool:
    """Whether a dump is among the first `look_at` files of `folder` (its subfolders included).

    Quick enough for a drag hovering over the window: `.sym` files are passed over unread,
    other files are read for their first bytes only, and the search stops at `look_at`.
    """
    looked = 0
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            if name.lower().endswith(".sym"):
                continue
            if _look(os.path.join(root, name)).kind is not None:
                return True
            looked += 1
            if looked >= look_at:
                return False
    return False


#: `route` of a file that could not be opened: reported wherever it is.
_UNREADABLE = b"\0unreadable"


def _look(path: str) -> FoundDump:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return FoundDump(path)  # reading a pipe would wait for a writer: the triage says what it is
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
            kind = dump_kind(head)
            route = _main_module_identity(f, head) if kind == MINIDUMP else b""
    except OSError:
        return FoundDump(path, None, _UNREADABLE)
    return FoundDump(path, kind, route)


_ENTRY = struct.Struct("<III")  # stream type, size, offset
_MODULE_LIST = 4
_MODULE_SIZE = 108
_CV_FIELD = 76  # MINIDUMP_MODULE.CvRecord: size, offset
_MAX_STREAMS = 4096
_MAX_CV = 1024


def _main_module_identity(f: BinaryIO, head: bytes) -> bytes:
    """The first module's CodeView record (its debug id and file), or b"" when it cannot be read.

    Reads only the directory and that record: cheap next to walking the dump, and wrong
    input only makes routing worse, never the triage.
    """
    try:
        endian = "<" if head[:4] == b"MDMP" else ">"
        _, _, count, directory = struct.unpack_from(endian + "4sIII", head, 0)
        f.seek(directory)
        entries = f.read(_ENTRY.size * min(count, _MAX_STREAMS))
        for i in range(len(entries) // _ENTRY.size):
            stream_type, size, offset = struct.unpack_from(endian + "III", entries, i * _ENTRY.size)
            if stream_type != _MODULE_LIST or size < 4 + _MODULE_SIZE:
                continue
            f.seek(offset)
            stream = f.read(min(size, 8 + _MODULE_SIZE))
            (modules,) = struct.unpack_from(endian + "I", stream, 0)
            first = 8 if size == 8 + modules * _MODULE_SIZE else 4  # some writers pad the count
            cv_size, cv_offset = struct.unpack_from(endian + "II", stream, first + _CV_FIELD)
            f.seek(cv_offset)
            return f.read(min(cv_size, _MAX_CV))
    except (struct.error, OSError, ValueError, OverflowError):
        pass
    return b""
