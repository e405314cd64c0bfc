"""Memory stays bounded: no allocation sized by a count or size field, no amplification by sharing.

* Every generator variant with a huge count or size (the `huge-count` family, and every
  `0xffffffff` size or length of the other families) is read, walked and reported under
  `tracemalloc`: the peak stays within a small multiple of the file, never near what the
  fields claim (billions of entries, gigabyte-long strings).
* A hostile dump can point thousands of records at one long string or one CodeView record;
  decoding it once per record turned a 1 MB file into gigabytes. Strings are now decoded once
  per offset and shared, and the text decoded at distinct offsets has a budget.
"""

from __future__ import annotations

import struct
import tracemalloc
from collections.abc import Callable

import pytest

from inspector.core.errors import InspectorError
from inspector.core.minidump import Minidump, StreamType
from inspector.core.minidump.reader import TEXT_BUDGET
from inspector.core.process import ProcessOptions, process
from inspector.core.report.json_report import render_json
from tests.robustness.conftest import collected_dump_variants
from tests.robustness.damage import DumpVariant

HUGE = [
    v
    for v in collected_dump_variants()
    if v.seed is not None and (v.family == "huge-count" or "=0xffffff" in v.name)
]


def peak_of(work: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def read_walk_report(data: bytes) -> None:
    try:
        dump = Minidump.from_bytes(data)
        dump.parse_all()
        # what the dump costs, not this machine's libc: its symbols are bounded by the object
        render_json(process(dump, ProcessOptions(use_symbols_cache=False, local_modules=False)))
    except InspectorError:
        pass


@pytest.mark.parametrize("variant", HUGE, ids=[v.name for v in HUGE])
def test_huge_counts_and_sizes_allocate_nothing_they_claim(variant: DumpVariant) -> None:
    peak = peak_of(lambda: read_walk_report(variant.data))
    # the seeds are 2–28 KB; a whole walk with its traces and reports takes well under 1 MB
    assert peak < (2 << 20) + 200 * len(variant.data), f"peak {peak} bytes for {len(variant.data)}"


def _many_records_naming_one_string(count: int, stream_type: int, entry_size: int, name_at: int) -> bytes:
    """A dump whose one list stream has `count` entries, each naming the same 512 KiB string."""
    name = ("x" * (256 * 1024)).encode("utf-16-le")
    list_rva = 32 + 12
    list_size = 4 + entry_size * count
    string_rva = list_rva + list_size
    out = bytearray(struct.pack("<IIIIIIQ", 0x504D444D, 0xA793, 1, 32, 0, 0, 0))
    out += struct.pack("<III", stream_type, list_size, list_rva)
    out += struct.pack("<I", count)
    for i in range(count):
        entry = bytearray(entry_size)
        if stream_type == StreamType.ModuleListStream:
            struct.pack_into("<QI", entry, 0, 0x10000 * (i + 1), 0x1000)
        else:
            struct.pack_into("<I", entry, 0, i + 1)
        struct.pack_into("<I", entry, name_at, string_rva)
        out += entry
    out += struct.pack("<I", len(name)) + name + b"\0\0"
    return bytes(out)


@pytest.mark.parametrize(
    ("stream_type", "entry_size", "name_at"),
    [(StreamType.ModuleListStream, 108, 20), (StreamType.ThreadNamesStream, 12, 4)],
    ids=["modules", "thread-names"],
)
def test_thousands_of_records_naming_one_long_string_share_it(
    stream_type: int, entry_size: int, name_at: int
) -> None:
    """Was: 4000 modules naming one 512 KiB string took a gigabyte (2000x the file)."""
    data = _many_records_naming_one_string(4000, stream_type, entry_size, name_at)
    dumps: list[Minidump] = []

    def read() -> None:
        dump = Minidump.from_bytes(data)
        dump.parse_all()
        dumps.append(dump)

    peak = peak_of(read)
    assert peak < 8 * len(data)
    dump = dumps[0]
    if stream_type == StreamType.ModuleListStream:
        names = {id(m.code_file) for m in dump.modules}
        assert len(dump.modules) == 4000 and len(names) == 1
    else:
        assert dump.thread_names is not None and len(dump.thread_names.entries) == 4000
        assert len({id(e.name) for e in dump.thread_names.entries}) == 1
    assert dump.problems == ()


def test_overlapping_strings_at_distinct_offsets_stop_at_the_text_budget() -> None:
    """Distinct offsets cannot share: 4-byte steps into a run of length words, each a 1 MiB string."""
    count = 400
    list_rva = 32 + 12
    list_size = 4 + 108 * count
    text_rva = list_rva + list_size
    # every u32 of the text region reads as a length of 1 MiB (and so starts a long string)
    region = struct.pack("<I", 1 << 20) * ((1 << 20) // 4 + count + 8)
    out = bytearray(struct.pack("<IIIIIIQ", 0x504D444D, 0xA793, 1, 32, 0, 0, 0))
    out += struct.pack("<III", StreamType.ModuleListStream, list_size, list_rva)
    out += struct.pack("<I", count)
    for i in range(count):
        entry = bytearray(108)
        struct.pack_into("<QII", entry, 0, 0x10000 * (i + 1), 0x1000, 0)
        struct.pack_into("<I", entry, 20, text_rva + 4 * i)
        out += entry
    data = bytes(out + region)
    dumps: list[Minidump] = []
    peak = peak_of(lambda: dumps.append(Minidump.from_bytes(data)) or dumps[-1].parse_all())
    dump = dumps[0]
    assert len(dump.modules) == count  # every module is kept, the names past the budget are empty
    named = sum(1 for m in dump.modules if m.code_file)
    assert 0 < named < count and named * (1 << 20) <= max(TEXT_BUDGET, 4 * len(data))
    assert any("budget for text" in p.message for p in dump.problems)
    assert peak < 2 * max(TEXT_BUDGET, 4 * len(data))
