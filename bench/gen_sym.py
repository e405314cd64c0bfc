#!/usr/bin/env python3
"""Write a synthetic Breakpad .sym file of about a given size, with realistic proportions.

The proportions follow a real dump_syms --inlines output of a C library built with DWARF
(libpython3.11: line records ≈ 48 % of the bytes, STACK CFI rows ≈ 27 %, INLINE ≈ 16 %,
CFI INIT ≈ 4 %, FUNC ≈ 2.5 %, plus FILE / INLINE_ORIGIN tables), with a PUBLIC record for
one function in ten, as stripped exports add. Deterministic for a given seed and size.

Beside OUT.sym, `write` puts OUT.sym.end: the end of the last function, in hex (`function_end`
reads it), so a benchmark knows the address range without reading the file. It is written last,
so a file whose generation was interrupted has none.

    bench/gen_sym.py OUT.sym --size 100M [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}

FILES = 400
ORIGINS = 6000
MODULE_ID = "0123456789ABCDEF0123456789ABCDEF0"
REGISTERS = ("$rbx", "$rbp", "$r12", "$r13", "$r14", "$r15")


def parse_size(text: str) -> int:
    text = text.strip().upper()
    if text[-1:] in UNITS:
        return int(float(text[:-1]) * UNITS[text[-1]])
    return int(text)


def function_block(rng: random.Random, address: int, index: int) -> tuple[str, int]:
    """One FUNC with its line and INLINE records; returns the text and the function size."""
    lines_count = rng.randint(6, 46)
    out = []
    body = []
    cursor = address
    for _ in range(lines_count):
        size = rng.randint(2, 24)
        body.append(f"{cursor:x} {size:x} {rng.randint(1, 4000)} {rng.randrange(FILES)}\n")
        cursor += size
    size = cursor - address
    name = f"ns{index % 97}::Function{index}(int, char const*)"
    out.append(f"FUNC {address:x} {size:x} {rng.randint(0, 3) * 8} {name}\n")
    # inline call sites nest inside the function: depth 0 spans a slice, depth 1 part of it
    for depth in range(rng.choice((1, 2, 3, 4, 5, 6))):
        start = address + rng.randrange(max(1, size // 2))
        length = max(1, rng.randrange(max(2, size // (depth + 2))))
        ranges = f"{start:x} {length:x}"
        if rng.random() < 0.3:
            ranges += f" {start + length + 4:x} {rng.randint(1, 16):x}"
        call_site = f"{rng.randint(1, 4000)} {rng.randrange(FILES)}"
        out.append(f"INLINE {depth} {call_site} {rng.randrange(ORIGINS)} {ranges}\n")
    out.extend(body)
    return "".join(out), size


def cfi_block(rng: random.Random, address: int, size: int) -> str:
    rows = [f"STACK CFI INIT {address:x} {size:x} .cfa: $rsp 8 + .ra: .cfa -8 + ^\n"]
    offset = 8
    at = address
    for register in REGISTERS[: rng.randint(1, len(REGISTERS))]:
        at += rng.randint(1, 4)
        offset += 8
        rows.append(f"STACK CFI {at:x} .cfa: $rsp {offset} + {register}: .cfa -{offset} + ^\n")
    for _ in range(rng.randint(0, 4)):
        at += rng.randint(1, max(1, size // 8))
        rows.append(f"STACK CFI {at:x} .cfa: $rsp {offset + 8 * rng.randint(1, 8)} +\n")
    return "".join(rows)


def end_path(path: Path) -> Path:
    """Where `write` records the end of the file's last (and highest) function."""
    return path.with_name(path.name + ".end")


def function_end(path: Path) -> int | None:
    """The end of the highest FUNC of a file `write` finished, or None."""
    try:
        return int(end_path(path).read_text(encoding="ascii"), 16)
    except (FileNotFoundError, ValueError):
        return None


def write(path: Path, target_size: int, seed: int = 1) -> int:
    # what an interrupted run left: a stale CFI part would be appended, a stale end believed
    _side(path).unlink(missing_ok=True)
    end_path(path).unlink(missing_ok=True)
    rng = random.Random(seed)
    header = [f"MODULE Linux x86_64 {MODULE_ID} synthetic.so\n", "INFO CODE_ID 0123456789abcdef\n"]
    header += [f"FILE {i} /build/src/component{i % 37}/file{i}.c\n" for i in range(FILES)]
    header += [f"INLINE_ORIGIN {i} inline_helper_{i}(unsigned long)\n" for i in range(ORIGINS)]
    functions: list[tuple[int, int]] = []
    written = 0
    cfi_parts: list[str] = []
    publics: list[str] = []
    address = 0x1000
    # Budget: FUNC blocks ≈ 66 % of the file, CFI ≈ 31 %, PUBLIC a little; stop when the
    # running total (both halves) reaches the target.
    with path.open("w", encoding="ascii", newline="\n") as out:
        out.write("".join(header))
        written += sum(map(len, header))
        index = 0
        cfi_bytes = 0
        while written + cfi_bytes < target_size:
            text, size = function_block(rng, address, index)
            out.write(text)
            written += len(text)
            functions.append((address, size))
            cfi = cfi_block(rng, address, size)
            cfi_parts.append(cfi)
            cfi_bytes += len(cfi)
            if index % 10 == 0:
                publics.append(f"PUBLIC {address:x} 0 exported_symbol_{index}\n")
                cfi_bytes += len(publics[-1])
            address += size + rng.choice((0, 0, 4, 16))
            index += 1
            if len(cfi_parts) >= 4096:  # keep memory flat: CFI goes to a side file section by section
                _spill(path, cfi_parts)
        out.write("".join(publics))
    _spill(path, cfi_parts)
    with path.open("a", encoding="ascii") as out, _side(path).open(encoding="ascii") as side:
        for chunk in iter(lambda: side.read(1 << 20), ""):
            out.write(chunk)
    _side(path).unlink()
    # functions are written in increasing address order: the last one ends highest
    last, size = functions[-1]
    end_path(path).write_text(f"{last + size:x}\n", encoding="ascii")
    return len(functions)


def _side(path: Path) -> Path:
    return path.with_name(path.name + ".cfi.part")


def _spill(path: Path, parts: list[str]) -> None:
    with _side(path).open("a", encoding="ascii") as side:
        side.write("".join(parts))
    parts.clear()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("--size", default="10M", help="approximate size, e.g. 10M, 100M, 1G")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    count = write(args.out, parse_size(args.size), args.seed)
    print(f"{args.out}: {args.out.stat().st_size:,} bytes, {count:,} functions")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
