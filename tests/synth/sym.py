"""Build Breakpad `.sym` text from records, for symbol and unwinder tests.

Records are written in the order they are added, so a test can make
duplicates, overlaps and misplaced lines on purpose. Numbers are written as
Breakpad writes them (lower-case hex without `0x`, decimal line numbers and
ids) unless the test passes text through `raw()`.

    sym = (
        SymBuilder(debug_id="0123456789ABCDEF0123456789ABCDEF0", name="app")
        .file(0, "main.c")
        .inline_origin(1, "helper")
        .func(0x1000, 0x40, "main", lines=[(0x1000, 0x10, 12, 0)],
              inlines=[Inline(0, 14, 0, 1, [(0x1010, 8)])])
        .public(0x2000, "exported")
        .cfi(0x1000, 0x40, ".cfa: $rsp 8 + .ra: .cfa -8 + ^", [(0x1001, ".cfa: $rsp 16 +")])
        .stack_win(4, 0x1000, 0x40, program="$T0 $ebp = $eip $T0 4 + ^ =")
    )
    path = sym.write_to_store(tmp_path / "symbols")   # symbols/app/<id>/app.sym
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self


@dataclass(frozen=True)
class Line:
    address: int
    size: int
    line: int
    file: int

    def text(self) -> str:
        return f"{self.address:x} {self.size:x} {self.line} {self.file}"


@dataclass(frozen=True)
class Inline:
    """`INLINE <depth> <call line> <call file> <origin> (<address> <size>)+`; `call_file=None` writes
    the old syntax without a call-site file."""

    depth: int
    call_line: int
    call_file: int | None
    origin: int
    ranges: Sequence[tuple[int, int]] = field(default_factory=tuple)

    def text(self) -> str:
        head = (
            [self.depth, self.call_line]
            + ([] if self.call_file is None else [self.call_file])
            + [self.origin]
        )
        ranges = " ".join(f"{a:x} {s:x}" for a, s in self.ranges)
        return "INLINE " + " ".join(str(x) for x in head) + " " + ranges


class SymBuilder:
    def __init__(
        self,
        *,
        os: str = "Linux",
        cpu: str = "x86_64",
        debug_id: str = "0123456789ABCDEF0123456789ABCDEF0",
        name: str = "test",
        module: bool = True,
    ) -> None:
        self.os, self.cpu, self.debug_id, self.name = os, cpu, debug_id, name
        self._lines: list[str] = [f"MODULE {os} {cpu} {debug_id} {name}"] if module else []

    # ---- header records ---------------------------------------------------------

    def info(self, key: str, value: str) -> Self:
        self._lines.append(f"INFO {key} {value}")
        return self

    def code_id(self, code_id: str, code_file: str | None = None) -> Self:
        return self.info("CODE_ID", code_id if code_file is None else f"{code_id} {code_file}")

    def file(self, file_id: int, name: str) -> Self:
        self._lines.append(f"FILE {file_id} {name}")
        return self

    def inline_origin(self, origin_id: int, name: str, *, file_id: int | None = None) -> Self:
        """New syntax `INLINE_ORIGIN <id> <name>`, or the old `<id> <file id> <name>` with `file_id`."""
        middle = "" if file_id is None else f" {file_id}"
        self._lines.append(f"INLINE_ORIGIN {origin_id}{middle} {name}")
        return self

    # ---- code records -----------------------------------------------------------------

    def func(
        self,
        address: int,
        size: int,
        name: str,
        *,
        parameter_size: int = 0,
        multiple: bool = False,
        lines: Iterable[Line | tuple[int, int, int, int]] = (),
        inlines: Iterable[Inline] = (),
    ) -> Self:
        m = "m " if multiple else ""
        self._lines.append(f"FUNC {m}{address:x} {size:x} {parameter_size:x} {name}")
        self._lines.extend(inline.text() for inline in inlines)
        self._lines.extend((line if isinstance(line, Line) else Line(*line)).text() for line in lines)
        return self

    def public(self, address: int, name: str, *, parameter_size: int = 0, multiple: bool = False) -> Self:
        m = "m " if multiple else ""
        self._lines.append(f"PUBLIC {m}{address:x} {parameter_size:x} {name}")
        return self

    def cfi(self, address: int, size: int, rules: str, deltas: Iterable[tuple[int, str]] = ()) -> Self:
        self._lines.append(f"STACK CFI INIT {address:x} {size:x} {rules}")
        self._lines.extend(f"STACK CFI {a:x} {r}" for a, r in deltas)
        return self

    def stack_win(
        self,
        win_type: int,
        address: int,
        size: int,
        *,
        prologue: int = 0,
        epilogue: int = 0,
        parameters: int = 0,
        saved_registers: int = 0,
        locals: int = 0,
        max_stack: int = 0,
        program: str | None = None,
        allocates_base_pointer: bool = False,
        has_program: bool | None = None,
    ) -> Self:
        """`STACK WIN`: type 4 takes `program`, type 0 `allocates_base_pointer`; `has_program`
        overrides the flag (to write an inconsistent record)."""
        flag = (program is not None) if has_program is None else has_program
        last = program if program is not None else ("1" if allocates_base_pointer else "0")
        fields = (win_type, address, size, prologue, epilogue, parameters, saved_registers, locals, max_stack)
        self._lines.append("STACK WIN " + " ".join(f"{x:x}" for x in fields) + f" {int(flag)} {last}")
        return self

    def raw(self, line: str) -> Self:
        """Any line, as is (damaged records, odd spacing, garbage)."""
        self._lines.append(line)
        return self

    # ---- output --------------------------------------------------------------------------

    def lines(self) -> list[str]:
        return list(self._lines)

    def text(self, *, newline: str = "\n", final_newline: bool = True) -> str:
        body = newline.join(self._lines)
        return body + newline if final_newline and self._lines else body

    def to_bytes(self, *, newline: str = "\n", final_newline: bool = True) -> bytes:
        return self.text(newline=newline, final_newline=final_newline).encode("utf-8", "surrogateescape")

    def write(self, path: Path, *, newline: str = "\n", final_newline: bool = True) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.to_bytes(newline=newline, final_newline=final_newline))
        return path

    def store_path(self, root: Path, debug_file: str | None = None) -> Path:
        """`<root>/<debug file>/<debug id>/<debug file without .pdb>.sym` (a symbol store)."""
        leaf = debug_file or self.name
        stem = leaf[:-4] if leaf.lower().endswith(".pdb") else leaf
        return root / leaf / self.debug_id / f"{stem}.sym"

    def write_to_store(
        self, root: Path, debug_file: str | None = None, *, newline: str = "\n", final_newline: bool = True
    ) -> Path:
        return self.write(self.store_path(root, debug_file), newline=newline, final_newline=final_newline)
