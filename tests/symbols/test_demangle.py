"""Names as dump_syms writes them: compiler suffixes cut, C++ names demangled on lookup."""

from __future__ import annotations

import re

import pytest

from inspector.core.symbols.objects.demangle import (
    display_name,
    fix_symbol_name,
    stored_function_name,
)

#: dump_syms' `fix_symbol_name` regex, applied the plain way (ours only tries where a suffix can start)
PLAIN = re.compile(
    r"((\.(cold|constprop|llvm|localalias|lto_priv|isra|part|str)(\.[0-9]+)?)|( ?\[clone[^\]]*\] ?))+$"
)

NAMES = [
    "main",
    "foo.cold",
    "foo.constprop.0.isra.0",
    "foo.part.12.cold",
    "foo.bar.cold",
    "foo.bar",
    "a.b.c.llvm.1234",
    "foo [clone .cold]",
    "foo [clone .constprop.0] [clone .isra.0]",
    "foo[clone .cold]",
    "foo [clone .cold] extra",
    "std::vector<int>::at(unsigned long) [clone .cold]",
    "operator[]",
    "x.str.1",
    "_ZN3foo3barEv.cold",
    "_ZN3foo3barEv.lto_priv.0",
    "..",
    ".cold",
    "[clone ]",
    "tail.localalias",
]


@pytest.mark.parametrize("name", NAMES)
def test_suffixes_are_cut_exactly_as_dump_syms_rule_says(name: str) -> None:
    assert fix_symbol_name(name) == PLAIN.sub("", name)


def test_stored_names_are_final_unless_mangled_and_demangle_on_display() -> None:
    pytest.importorskip("ctypes")
    mangled = "_ZNSt6vectorIiSaIiEE9push_backERKi.cold"
    stored = stored_function_name(mangled)
    assert stored == "_ZNSt6vectorIiSaIiEE9push_backERKi"  # suffix cut, still mangled
    shown = display_name(stored)
    if shown == stored:
        pytest.skip("no C++ runtime demangler on this machine")
    assert shown == "std::vector<int, std::allocator<int> >::push_back(int const&)"
    assert display_name("plain_c_symbol.cold") == "plain_c_symbol.cold"  # unmangled PUBLIC: as is
    # a PUBLIC is stored as the symbol table has it: its suffix is cut when it is shown
    assert display_name(mangled) == shown
    assert stored_function_name("fn\x01name.cold") == "fnname"
