"""Convert the objects found for one module into a Breakpad symbol file (see `breakpad_text`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from inspector.core.cancel import NEVER, CancelToken
from inspector.core.record import record
from inspector.core.symbols.objects.breakpad_text import (
    ModuleText,
    add_section_symbols,
    add_symcache,
    drop_publics_inside_functions,
    merge_into,
    write_text,
)
from inspector.core.symbols.objects.errors import ObjectUnreadable
from inspector.core.symbols.objects.reading import ObjectInfo
from inspector.core.symbols.objects.symcache_reader import read_symcache

#: Bumped whenever the text written for the same objects changes: cached conversions are redone.
#: 2: C++ names kept mangled (INFO NAMES mangled); 3: no MODULE line in PE CFI, CFI_SOURCE names the object
CONVERTER_VERSION = 3


@record
class Converted:
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
    # symbolic builds the CfiCache in Rust without the GIL (cffi releases it): on a second core
    # while this thread builds the SymCache and turns it into records (libtorch_cpu: 1.4 s saved)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="cficache") as pool:
        cfi_job = pool.submit(_cfi_text, obj) if info.has_unwind else None
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
        if cfi_job is not None:
            try:
                cfi = cfi_job.result()
            except Exception as exc:
                reason = f"cannot read its unwind tables: {_first_line(exc)}"
                raise ObjectUnreadable(info.path, reason) from None
            if cfi.strip():
                text.cfi.append(cfi)
                text.cfi_sources.append(f"{cfi_label(info)} of {info.path}")
    return text


def _cfi_text(obj: Any) -> bytes:
    data: bytes = obj.make_cficache().open_stream().read()
    # a PE's CfiCache opens with the MODULE line of its PDB: the module's own comes first already
    while data.startswith((b"MODULE ", b"INFO ")):
        data = data.split(b"\n", 1)[1] if b"\n" in data else b""
    return data


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
    """
    texts = [_object_text(info, obj, cancel) for info, obj in objects]
    if not texts:
        raise ObjectUnreadable(str(out), "no object to convert")
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i].symbols))
    base = texts[order[0]]
    for i in order[1:]:
        merge_into(base, texts[i])
    # the unwinding binary's CFI first: where two objects describe the same code, it is used
    base.cfi.sort(key=len, reverse=True)
    drop_publics_inside_functions(base)
    info = objects[order[0]][0]
    cfi_info = [f"CFI_SOURCE {source}" for source in base.cfi_sources]
    with open(out, "wb") as f:
        write_text(
            f,
            base,
            info=info,
            debug_file=debug_file,
            debug_id=debug_id,
            code_id=code_id,
            code_file=code_file,
            extra_info=[*extra_info, *cfi_info],
        )
    functions = sum(1 for s in base.symbols.values() if not s.public)
    return Converted(
        tuple(base.cfi_sources),
        functions,
        len(base.symbols) - functions,
        sum(len(c) for c in base.cfi),
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]
