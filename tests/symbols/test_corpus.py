"""Every `.sym` file beside the project loads with the damage we expect, and symbolizes every frame of
the reference outputs exactly as rust-minidump did.

Reads ../shared/corpus and ../shared/perf/torch-autograd (never copied into the project); each test
skips when its data is absent. The 235 MB torch file is not indexed here (see bench/).
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from inspector.core.symbols import DamageKind, FrameSymbol, IndexCache, SymbolFile, SymbolSupplier
from tests.conftest import PERF, missing_shared_data

pytestmark = pytest.mark.golden

TORCH = PERF / "torch-autograd"
MAX_TEST_SYM_BYTES = 20_000_000

#: path under the data root → (damage counts, missing final newline, old INLINE syntax); all others clean
EXPECTED_DAMAGE: dict[str, tuple[dict[DamageKind, int], bool, bool]] = {
    "symbolic/py/cfi-only/crash_linux.sym": ({DamageKind.NO_MODULE_LINE: 1}, False, False),
    "symbolic/py/cfi-only/crash_macos.sym": ({DamageKind.NO_MODULE_LINE: 1}, False, False),
    "breakpad/symbols/linux_inline/BBA6FA10B8AAB33D00000000000000000/linux_inline.new.sym": ({}, True, False),
    "breakpad/symbols/linux_inline/BBA6FA10B8AAB33D00000000000000000/linux_inline.sym": ({}, True, False),
    "breakpad/symbols/linux_inline/BBA6FA10B8AAB33D00000000000000000/linux_inline.old.sym": ({}, False, True),
    "breakpad/symbols-inline-old/linux_inline/BBA6FA10B8AAB33D00000000000000000/linux_inline.sym": (
        {},
        False,
        True,
    ),
}


@pytest.fixture(scope="module")
def perf_dir() -> Path:
    if not (TORCH / "symbols").is_dir():
        missing_shared_data("performance case", TORCH)
    return TORCH


def _sym_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.sym") if p.stat().st_size <= MAX_TEST_SYM_BYTES)


def test_every_corpus_sym_file_loads_with_the_expected_damage(corpus_dir: Path, tmp_path: Path) -> None:
    files = _sym_files(corpus_dir)
    assert len(files) >= 30
    for path in files:
        relative = path.relative_to(corpus_dir).as_posix()
        counts, no_newline, old_inline = EXPECTED_DAMAGE.get(relative, ({}, False, False))
        with SymbolFile.open(path, cache=IndexCache(tmp_path)) as sf:
            report = sf.check_all()
            assert (dict(report.counts), report.missing_final_newline, report.old_inline_syntax) == (
                counts,
                no_newline,
                old_inline,
            ), relative
            assert sf.counts.functions + sf.counts.publics + sf.counts.cfi_blocks > 0, relative


def test_every_small_perf_sym_file_loads_clean(perf_dir: Path, tmp_path: Path) -> None:
    files = _sym_files(perf_dir / "symbols")
    assert len(files) >= 57
    for path in files:
        with SymbolFile.open(path, cache=IndexCache(tmp_path)) as sf:
            report = sf.check_all()
            assert not report.damaged and not report.missing_final_newline, path
            assert sf.module is not None and sf.info.generator == "mozilla/dump_syms 2.3.5", path


@dataclass(frozen=True)
class JsonModule:
    code_file: str
    code_id: str
    debug_file: str
    debug_id: str


def _json_runs(corpus: Path) -> list[tuple[Path, Path | None]]:
    """(reference JSON, symbols path) of every successful `--json` reference run."""
    runs = []
    for row in (corpus / "reference-commands.tsv").read_text().splitlines():
        if row.startswith("#") or not row.strip():
            continue
        exit_code, mode, _dump, command = row.split("\t", 3)
        if mode != "json" or exit_code != "0":
            continue
        args = shlex.split(command)
        output = corpus / args[args.index("--output-file") + 1]
        rest = args[args.index("--log-file") + 2 :]
        symbols = corpus / rest[1] if len(rest) > 1 else None
        if output.is_file():
            runs.append((output, symbols))
    return runs


def _expected(frame: dict[str, object]) -> tuple[object, ...]:
    inlines = frame.get("inlines") or []
    assert isinstance(inlines, list)
    return (
        frame.get("function"),
        int(str(frame["function_offset"]), 16) if frame.get("function_offset") else None,
        frame.get("file"),
        frame.get("line"),
        [(i.get("function"), i.get("file"), i.get("line")) for i in inlines],
    )


def _ours(symbol: FrameSymbol | None, offset: int) -> tuple[object, ...]:
    if symbol is None:
        return (None, None, None, None, [])
    return (
        symbol.function_name,
        offset - symbol.function_base,
        symbol.source_file,
        symbol.source_line,
        [(i.function_name, i.source_file, i.source_line) for i in symbol.inlines],
    )


def _check_reference(reference: Path, symbols: Path, tmp_path: Path) -> int:
    data = json.loads(reference.read_text())
    modules = {m["filename"]: m for m in data["modules"]}
    supplier = SymbolSupplier([symbols], cache=IndexCache(tmp_path), code_id_fallback=False)
    files: dict[str, SymbolFile | None] = {}
    checked = 0
    try:
        for thread in data["threads"]:
            for frame in thread["frames"]:
                name = frame.get("module")
                module = modules.get(name) if name else None
                if module is None or not module["loaded_symbols"] or module["corrupt_symbols"]:
                    continue
                if name not in files:
                    identity = JsonModule(
                        module["filename"] or "",
                        module["code_id"] or "",
                        module["debug_file"] or "",
                        module["debug_id"] or "",
                    )
                    located = supplier.locate(identity)
                    if located.path is None:  # the torch files are generated elsewhere
                        assert reference.parent.parent == TORCH, (reference, name)
                        files[name] = None
                        continue
                    big = os.path.getsize(located.path) > MAX_TEST_SYM_BYTES
                    files[name] = None if big else SymbolFile.open(located.path, cache=supplier.cache)
                sf = files[name]
                if sf is None:
                    continue
                offset = int(frame["module_offset"], 16)
                assert _ours(sf.symbolize(offset), offset) == _expected(frame), (
                    reference.name,
                    name,
                    hex(offset),
                )
                checked += 1
    finally:
        for sf in files.values():
            if sf is not None:
                sf.close()
    return checked


def test_corpus_frames_symbolize_as_rust_minidump(corpus_dir: Path, tmp_path: Path) -> None:
    checked = 0
    for reference, symbols in _json_runs(corpus_dir):
        if symbols is not None:
            checked += _check_reference(reference, symbols, tmp_path)
    assert checked >= 100


def test_torch_frames_outside_the_big_files_symbolize_as_rust_minidump(
    perf_dir: Path, tmp_path: Path
) -> None:
    reference = perf_dir / "reference" / "torch_autograd.rust-minidump.json"
    assert _check_reference(reference, perf_dir / "symbols", tmp_path) >= 40
