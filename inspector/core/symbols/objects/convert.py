"""Convert the objects found for one module into a Breakpad symbol file (see `breakpad_text`)."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from inspector.core.cancel import NEVER, CancelToken
from inspector.core.collector import collector_paused
from inspector.core.record import Record
from inspector.core.symbols.objects.breakpad_text import (
    ModuleText,
    add_section_symbols,
    add_symcache,
    drop_publics_inside_functions,
    merge_into,
    write_header,
    write_records,
)
from inspector.core.symbols.objects.errors import ObjectUnreadable
from inspector.core.symbols.objects.reading import ObjectInfo, with_sections
from inspector.core.symbols.objects.symcache_reader import read_symcache

#: Bumped whenever the text written for the same objects changes: cached conversions are redone.
#: 2: C++ names kept mangled (INFO NAMES mangled); 3: no MODULE line in PE CFI, CFI_SOURCE names the
#: object, PUBLIC names as the symbol table has them
CONVERTER_VERSION = 3


class Converted(Record):
    """What a conversion wrote: the CFI's origins and what kinds of records there are."""

    cfi_sources: tuple[str, ...]
    functions: int
    publics: int
    cfi_bytes: int


def cfi_label(info: ObjectInfo) -> str:
    """Where an object's CFI comes from, as the trace and the Modules pane name it."""
    if info.file_format == "elf":
        names = [s for s in (".eh_frame", ".debug_frame") if (found := info.section(s)) and found[2] > 0]
        return " + ".join(names) if names else "ELF unwind tables"
    if info.file_format == "macho":
        return "compact unwind + .eh_frame"
    if info.file_format == "pe":
        return "PE unwind info"
    if info.file_format == "pdb":
        return "PDB frame data"
    return info.file_format


def _object_text(info: ObjectInfo, obj: Any, cancel: CancelToken) -> ModuleText:
    text = ModuleText()
    try:
        symcache = obj.make_symcache()
        buffer = symcache.open_stream().read()
    except Exception as exc:  # symbolic reports damage as exceptions
        raise ObjectUnreadable(info.path, f"cannot read its symbols: {_first_line(exc)}") from None
    cancel.check()
    tables = read_symcache(buffer, origin=info.path)
    add_symcache(text, tables, info, cancel=cancel)
    add_section_symbols(text, info, os.path.basename(info.path))
    cancel.check()
    return text


def _cfi_file(obj: Any, path: Path) -> int:
    """symbolic's CfiCache text of the object, written to `path`; its size in bytes."""
    stream = obj.make_cficache().open_stream()
    with open(path, "wb") as f:
        chunk = stream.read(1 << 16)
        # a PE's CfiCache opens with the MODULE line of its PDB: the module's own comes first already
        while chunk.startswith((b"MODULE ", b"INFO ")) and b"\n" in chunk:
            chunk = chunk.split(b"\n", 1)[1]
        last = b""
        while True:
            if chunk:
                f.write(chunk)
                last = chunk
            chunk = stream.read(1 << 20)
            if not chunk:
                break
        if last and not last.endswith(b"\n"):
            f.write(b"\n")
        return f.tell()


def _append(out: Any, path: Path) -> None:
    """The whole file at `path` added to `out` (in the kernel where it can: 100 MB of CFI)."""
    out.flush()
    with open(path, "rb") as src:
        size = os.fstat(src.fileno()).st_size
        sent = 0
        try:
            while sent < size:
                done = os.sendfile(out.fileno(), src.fileno(), sent, size - sent)
                if done == 0:
                    break
                sent += done
        except (AttributeError, OSError):
            pass  # no sendfile here (or not for these files): copied below
        if sent < size:
            src.seek(sent)
            out.seek(0, os.SEEK_END)
            shutil.copyfileobj(src, out, 1 << 20)


def convert_objects(
    objects: Sequence[tuple[ObjectInfo, Any]],
    out: Path,
    *,
    debug_file: str,
    debug_id: str,
    code_id: str | None,
    code_file: str | None,
    extra_info: Sequence[str] = (),
    cancel: CancelToken = NEVER,
) -> Converted:
    """Write the Breakpad text of these objects (all of one module) to `out`.

    The object with the most symbols is the base and the others are merged into it, as
    dump_syms merges a binary with its debug file: FUNCs win over PUBLICs, the CFI of both is
    kept (a debug file's unwind sections are usually empty).

    symbolic builds each CfiCache in Rust without the GIL (cffi releases it), so they are made
    on other threads from the start while this one turns the SymCaches into records and writes
    them (to a file beside `out`: the INFO lines naming the CFI's origins come first and are
    known only when the CFI is); the CFI is written last, as the file ends with it anyway.
    """
    if not objects:
        raise ObjectUnreadable(str(out), "no object to convert")
    records = out.with_name(out.name + ".records")
    cfi_parts = [out.with_name(f"{out.name}.cfi{i}") for i in range(len(objects))]
    # the parts are removed once the pool has ended: a CFI thread still running would make its
    # file again after an early removal (a cancelled conversion)
    try:
        with ThreadPoolExecutor(max_workers=len(objects), thread_name_prefix="cficache") as pool:
            jobs = [
                pool.submit(_cfi_file, obj, part) if info.has_unwind else None
                for (info, obj), part in zip(objects, cfi_parts, strict=True)
            ]
            # read while the CFI is made: only the records and the CFI's label need them
            objects = [(with_sections(info), obj) for info, obj in objects]
            with collector_paused:  # hundreds of thousands of records, none in a cycle
                base_info, functions, publics = _write_records(objects, records, cancel)
            cfi: list[tuple[int, Path, str]] = []
            for (info, _), job, part in zip(objects, jobs, cfi_parts, strict=True):
                if job is None:
                    continue
                try:
                    size = job.result()
                except Exception as exc:
                    reason = f"cannot read its unwind tables: {_first_line(exc)}"
                    raise ObjectUnreadable(info.path, reason) from None
                if size:
                    cfi.append((size, part, f"{cfi_label(info)} of {info.path}"))
            # the unwinding binary's CFI first: where two objects describe the same code, it is used
            cfi.sort(key=lambda c: c[0], reverse=True)
            with open(out, "wb") as f:
                write_header(
                    f,
                    info=base_info,
                    debug_file=debug_file,
                    debug_id=debug_id,
                    code_id=code_id,
                    code_file=code_file,
                    extra_info=[*extra_info, *(f"CFI_SOURCE {source}" for _, _, source in cfi)],
                )
                for part in (records, *(part for _, part, _ in cfi)):
                    _append(f, part)
    finally:
        for part in (records, *cfi_parts):
            with contextlib.suppress(OSError):
                part.unlink()
    return Converted(
        tuple(source for _, _, source in cfi), functions, publics, sum(size for size, _, _ in cfi)
    )


def _write_records(
    objects: Sequence[tuple[ObjectInfo, Any]], path: Path, cancel: CancelToken
) -> tuple[ObjectInfo, int, int]:
    """Write the FILE … PUBLIC records of the objects to `path`: (the base object, FUNCs, PUBLICs).

    The records are freed when this returns (by reference counting: they hold no cycles),
    before the collector's thresholds are put back, so that no collection walks them.
    """
    texts = [_object_text(info, obj, cancel) for info, obj in objects]
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i].symbols))
    base = texts[order[0]]
    for i in order[1:]:
        merge_into(base, texts[i])
    drop_publics_inside_functions(base)
    with open(path, "wb") as f:
        write_records(f, base)
    functions = sum(1 for s in base.symbols.values() if not s.public)
    return objects[order[0]][0], functions, len(base.symbols) - functions


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]
