"""Coverage-guided fuzzing of the STACK CFI / STACK WIN postfix evaluator (atheris).

    python fuzz/fuzz_postfix.py fuzz/corpus/postfix -max_total_time=600 -timeout=10

Each input is decoded as text (invalid UTF-8 replaced, as the symbol reader does) and used
as a CFI rule text (`parse_cfi_rules`, `compose_cfi_rules`, every rule evaluated with and
without a CFA) and as a STACK WIN program for 32- and 64-bit registers. The evaluator must
return a result with a value or a reason, never raise and never take long: its token and
stack limits bound the work.
"""

from __future__ import annotations

import sys

import atheris
from _seeds import corpus_argument

with atheris.instrument_imports(include=["inspector"]):
    from inspector.core.symbols.postfix import (
        compose_cfi_rules,
        evaluate_cfi,
        evaluate_win,
        parse_cfi_rules,
    )

REGISTERS = {
    "rsp": 0x7FFF0000,
    "rbp": 0x7FFF0040,
    "rip": 0x401000,
    "sp": 0x1000,
    "x29": 0x1010,
    "esp": 0x1000,
}
WIN_VARIABLES = {"$esp": 0x1000, "$ebp": 0x1040, ".raSearch": 0x1008, ".cbParams": 8}


def read_word(address: int) -> int | None:
    # a little readable memory, so `^` both succeeds and fails
    return None if address & 0x7 or not 0x1000 <= address < 0x10000 else address * 3


def test_one_input(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    rules = parse_cfi_rules(text)
    compose_cfi_rules([text, text[: len(text) // 2]])
    for _register, expression in rules or [(".cfa", text)]:
        for cfa in (None, 0x1008):
            for width in (4, 8):
                result = evaluate_cfi(
                    expression, registers=REGISTERS, read_word=read_word, cfa=cfa, width=width
                )
                assert result.ok == (result.error is None) and (result.value is not None or not result.ok)
    for width in (4, 8):
        result = evaluate_win(text, variables=WIN_VARIABLES, read_word=read_word, width=width)
        assert result.ok or result.error


def main() -> None:
    corpus_argument("postfix", sys.argv)
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
