"""Coverage-guided fuzzing of the `.sym` parser, the symbol index and its cache validator (atheris).

    python fuzz/fuzz_symbols.py fuzz/corpus/symbols -max_total_time=600 -timeout=10 -rss_limit_mb=2048

Each input is written as a `.sym` file and opened without a cache (the vectorised index
builder runs), every lookup is made at addresses taken from the file's own records and
around them, every FUNC and CFI block is parsed (`check_all`). Then the index image built
for it is damaged at a position derived from the input and must be refused with an
`IndexCacheError` or read back as a valid image. Only `InspectorError`s may escape.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import zlib

import atheris
from _seeds import corpus_argument

with atheris.instrument_imports(include=["inspector"]):
    from inspector.core.errors import InspectorError
    from inspector.core.symbols import IndexCache, SymbolFile
    from inspector.core.symbols.errors import IndexCacheError
    from inspector.core.symbols.index_build import build_index
    from inspector.core.symbols.index_format import IndexImage, SymbolIdentity

_WORK = tempfile.mkdtemp(prefix="fuzz-symbols-")
_PATH = os.path.join(_WORK, "input.sym")
_NO_CACHE = IndexCache(None)
_HEX = re.compile(
    rb"(?:FUNC|PUBLIC|STACK CFI INIT|STACK WIN \w|STACK CFI|\n)[ \t]+(?:m )?([0-9a-fA-F]{1,16})"
)


def _addresses(data: bytes) -> list[int]:
    found = [int(m.group(1), 16) for m in _HEX.finditer(data[:65536])][:24]
    out = {0, 1, 0xFFFFFFFFFFFFFFFF}
    for a in found:
        out.update((a, a + 1, max(a - 1, 0), a + 0x10))
    return sorted(out)


def test_one_input(data: bytes) -> None:
    with open(_PATH, "wb") as f:
        f.write(data)
    try:
        sym = SymbolFile.open(_PATH, cache=_NO_CACHE)
    except InspectorError:
        return
    try:
        for address in _addresses(data):
            sym.symbolize(address)
            sym.find_cfi(address)
            sym.find_stack_win(address)
            sym.has_symbol_at(address)
            sym.find_inlines(address)
        sym.check_all()
        _ = (sym.damage.summary(), sym.counts, sym.module, sym.info)
    except InspectorError:
        pass
    finally:
        sym.close()
    identity = SymbolIdentity(_PATH, len(data), 0, data.split(b"\n", 1)[0][:4096])
    image = build_index(data, identity)
    if image:
        at = zlib.crc32(data) % len(image)
        image[at] ^= 1 + (len(data) % 255)
        with contextlib.suppress(IndexCacheError):
            IndexImage(bytes(image), identity).release()


def main() -> None:
    corpus_argument("symbols", sys.argv)
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
