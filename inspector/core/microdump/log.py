"""Finding microdumps in a log: the record lines between BEGIN and END, logcat prefixes removed.

Breakpad's microdump writer logs one record per line under the tag `google-breakpad`, so a
microdump usually arrives inside an Android logcat, each line behind a prefix whose shape
depends on logcat's `-v` format:

    W/google-breakpad( 3745): O A arm 02 armv7l OS VERSION INFO           brief
    02-25 07:54:01.688 F/google-breakpad(13589): M F6F86000 …            time
    02-23 15:49:14.700  1740  1739 F google-breakpad: S 0 …               threadtime

The record is what follows the first `: ` after the tag. Breakpad's reader (`microdump.cc`)
takes every tagged line after the first BEGIN up to the next END, whatever process wrote it,
and reads only that first microdump. Here each BEGIN … END block is kept, and lines are
grouped by the process id in their prefix: two processes crashing at once interleave their
lines in the log, and each block keeps only its own. A BEGIN that arrives while a block of the
same process is still open cuts that block off; a block without END is cut off by the end of
the log. Lines without the tag are records only inside a block whose BEGIN line had no tag
either (a microdump pasted without its logcat prefixes).

`scan_log` never raises: what cannot be placed becomes a `LogNote` (an END without its BEGIN:
the tail of an earlier microdump cut off by the start of the excerpt).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from inspector.core.record import Record

BEGIN = "-----BEGIN BREAKPAD MICRODUMP-----"
END = "-----END BREAKPAD MICRODUMP-----"
TAG = b"google-breakpad"
_BEGIN_BYTES = BEGIN.encode()
_END_BYTES = END.encode()

#: The tag, an optional `(pid)` (brief, time and process formats), then the `:` ending the prefix.
_TAGGED = re.compile(rb"google-breakpad\s*(?:\(\s*(\d+)\s*\))?\s*: ?")
#: threadtime's `  pid  tid L ` right before the tag.
_THREADTIME_PID = re.compile(rb"(?:^|\s)(\d+)\s+\d+\s+[VDIWEFAS]\s+$")
#: Lines of `logcat -v long` between records in an untagged block: `[ date pid:tid L/tag ]`.
_LONG_HEADER = re.compile(r"^\[ .* \]$")

#: Where a line came from when it had no process id in its prefix.
_NO_PID = -1


class LogLine(Record):
    """One record line: its 1-based number and byte offset in the file, and the record text."""

    number: int
    offset: int
    text: str


class MicrodumpText(Record):
    """One BEGIN … END block: its record lines (without BEGIN and END) and how it ended.

    `end` is None when the block is cut off; `cut_reason` then says by what.
    """

    begin: LogLine
    records: tuple[LogLine, ...]
    end: LogLine | None
    process_id: int | None
    cut_reason: str | None = None

    @property
    def last_line(self) -> int:
        if self.end is not None:
            return self.end.number
        return self.records[-1].number if self.records else self.begin.number

    @property
    def line_span(self) -> str:
        """`lines 7–191` for messages."""
        return f"lines {self.begin.number}–{self.last_line}"


class LogNote(Record):
    """Something in the log outside any block worth saying (line number, byte offset, code, text)."""

    line: int
    offset: int
    code: str
    message: str


class MicrodumpLog(Record):
    dumps: tuple[MicrodumpText, ...]
    notes: tuple[LogNote, ...]


def is_microdump(head: bytes | bytearray | memoryview) -> bool:
    """Whether the first bytes of a file (a few kilobytes are enough) hold a microdump's BEGIN line.

    Cheap content sniffing for callers that decide what to open (`open_any_dump`, triage):
    a microdump is text, so no magic number at offset 0; its BEGIN line may follow other log
    lines.
    """
    return _BEGIN_BYTES in bytes(head)


def mentions_microdump(data: bytes | bytearray | memoryview) -> bool:
    """Whether `data` holds a BEGIN or an END line (a log that holds only the tail of one too)."""
    raw = data if isinstance(data, bytes | bytearray) else bytes(data)
    return raw.find(_BEGIN_BYTES) >= 0 or raw.find(_END_BYTES) >= 0


class _Open(Record, frozen=False):
    begin: LogLine
    records: list[LogLine]
    process_id: int | None
    position: int  # among all BEGIN lines: blocks are returned in that order
    column: int = 0  # untagged blocks: where the records start in each line


_Start = Callable[[int | bytes, LogLine, int | None, int], None]
_Close = Callable[[int | bytes, LogLine | None, str | None], None]


def _record_of(raw: bytes) -> tuple[int, str] | None:
    """(process key, record) of a tagged line, None for a line without the tag."""
    at = raw.find(TAG)
    if at < 0:
        return None
    match = _TAGGED.search(raw, at)
    if match is None:  # the tag without the colon that ends a prefix: not a record line
        return None
    pid = match.group(1)
    if pid is None:
        before = _THREADTIME_PID.search(raw, 0, at)
        pid = None if before is None else before.group(1)
    key = _NO_PID if pid is None else int(pid)
    return key, raw[match.end() :].decode("utf-8", errors="replace").rstrip("\r\n")


def scan_log(data: bytes | bytearray | memoryview) -> MicrodumpLog:
    """Every microdump block of a log, in the order their BEGIN lines appear (see the module doc)."""
    raw_data = bytes(data)
    notes: list[LogNote] = []
    open_blocks: dict[int | bytes, _Open] = {}
    orphans: dict[int, LogLine] = {}  # key -> first record line seen outside a block since the last END
    finished: list[tuple[int, MicrodumpText]] = []  # (position of its BEGIN, block)
    begins = 0

    def close(key: int | bytes, end: LogLine | None, reason: str | None) -> None:
        block = open_blocks.pop(key)
        text = MicrodumpText(
            block.begin, tuple(block.records), end, block.process_id, None if end is not None else reason
        )
        finished.append((block.position, text))

    def start(key: int | bytes, begin: LogLine, process_id: int | None, column: int = 0) -> None:
        nonlocal begins
        if key in open_blocks:
            same = "of the same process " if process_id else ""
            close(key, None, f"a new microdump {same}begins at line {begin.number}")
        open_blocks[key] = _Open(begin, [], process_id, begins, column)
        begins += 1

    position = 0
    number = 0
    size = len(raw_data)
    while position < size:
        newline = raw_data.find(b"\n", position)
        stop = size if newline < 0 else newline
        number += 1
        line = raw_data[position:stop]
        offset = position
        position = stop + 1
        tagged = _record_of(line)
        if tagged is None:
            _untagged(line, LogLine(number, offset, ""), open_blocks, start, close)
            continue
        key, text = tagged
        entry = LogLine(number, offset, text)
        stripped = text.strip()
        if stripped == BEGIN:
            orphans.pop(key, None)
            start(key, entry, None if key == _NO_PID else key)
        elif stripped == END:
            if key in open_blocks:
                close(key, entry, None)
            else:
                first = orphans.pop(key, entry)
                notes.append(
                    LogNote(
                        first.number,
                        first.offset,
                        "MicrodumpFragment",
                        f"lines {first.number}–{number}: the end of a microdump whose BEGIN line is not in "
                        "the log (cut off by the start of the excerpt); ignored",
                    )
                )
        elif key in open_blocks:
            open_blocks[key].records.append(entry)
        elif stripped:
            orphans.setdefault(key, entry)
    for left in list(open_blocks):
        close(left, None, f"the log ends at line {number}")
    finished.sort(key=lambda item: item[0])
    return MicrodumpLog(tuple(block for _, block in finished), tuple(notes))


_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")


def _skeleton(prefix: bytes) -> bytes:
    """A prefix with its digits zeroed: timestamps and counters vary from line to line, the rest not."""
    return b"untagged:" + prefix.translate(_DIGITS_TO_ZERO)


def _untagged(
    line: bytes, where: LogLine, open_blocks: dict[int | bytes, _Open], start: _Start, close: _Close
) -> None:
    """A line without the `google-breakpad` tag: a BEGIN under another tag or none, or a record of one.

    Such a block's records are the lines whose prefix, up to the BEGIN line's column, has the
    same shape (digits aside) as the BEGIN line's: a microdump pasted without prefixes
    (column 0), or logged under another tag with fixed-width prefixes.
    """
    at = line.find(_BEGIN_BYTES)
    if at >= 0:
        start(_skeleton(line[:at]), LogLine(where.number, where.offset, BEGIN), None, at)
        return
    for key, block in list(open_blocks.items()):
        if not isinstance(key, bytes) or len(line) < block.column or _skeleton(line[: block.column]) != key:
            continue
        text = line[block.column :].decode("utf-8", errors="replace").strip()
        if not text or (block.column == 0 and _LONG_HEADER.match(text)):
            return
        entry = LogLine(where.number, where.offset, text)
        if text == END:
            close(key, entry, None)
        else:
            block.records.append(entry)
        return
