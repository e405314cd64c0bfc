"""Errors of the minidump reader, each with a stable `code`.

Two kinds of failure exist. A dump that cannot be read at all (not a
minidump, unreadable file, header or directory out of the file) raises one of
these from `Minidump.open` / `Minidump.from_bytes`. Damage inside a stream is
not raised: the stream keeps what could be read and a `StreamProblem` naming
the stream, the offset and the reason is recorded on the dump.
"""

from __future__ import annotations

from inspector.core.errors import MinidumpError
from inspector.core.record import Record


class UnreadableFile(MinidumpError):
    """The path is missing, a directory, or cannot be opened / mapped."""

    code = "UnreadableFile"


class DumpClosed(MinidumpError):
    """A stream was asked for after `Minidump.close()`."""

    code = "DumpClosed"


class NotAMinidump(MinidumpError):
    """The bytes do not start with a minidump header (e.g. a microdump or an HTTP upload)."""

    code = "NotAMinidump"


class HeaderMismatch(MinidumpError):
    """The signature is right but the header is unusable (e.g. the file is shorter than a header)."""

    code = "HeaderMismatch"


class VersionMismatch(MinidumpError):
    """The header's format version is not the minidump version (0xa793)."""

    code = "VersionMismatch"


class DirectoryTruncated(MinidumpError):
    """The stream directory lies (partly) outside the file."""

    code = "DirectoryTruncated"


class StreamTruncated(MinidumpError):
    """A read ran past the end of a stream or of the file."""

    code = "StreamTruncated"


class StreamSizeMismatch(MinidumpError):
    """A stream's size disagrees with the counts and sizes written inside it."""

    code = "StreamSizeMismatch"


class BadRva(MinidumpError):
    """An offset (RVA) inside a stream points outside the file."""

    code = "BadRva"


class BadData(MinidumpError):
    """A value that cannot be right (unknown version, bad text encoding, impossible size)."""

    code = "BadData"


class StreamProblem(Record):
    """Damage found while reading one stream; the rest of the dump is unaffected.

    `stream_type` is None for damage in the directory itself. `offset` is a
    file offset. `code` is the `code` of the error class that describes it.
    `rejects_stream` is False for damage confined to one item (one thread's
    context, one memory region) that rust-minidump also just skips.
    """

    stream_type: int | None
    offset: int
    message: str
    code: str
    #: True when a strict reader (rust-minidump) refuses the whole stream for this damage;
    #: this reader still returns what it could read.
    rejects_stream: bool = True

    def __str__(self) -> str:
        where = "directory" if self.stream_type is None else f"stream {self.stream_type:#x}"
        return f"{where} at {self.offset:#x}: {self.message} [{self.code}]"
