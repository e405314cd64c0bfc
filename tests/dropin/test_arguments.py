"""`--recover-function-args`: rust-minidump 0.25's parsing of x86 parameter lists (`arg_recovery.rs`)."""

from __future__ import annotations

import pytest

from inspector.core.arguments import CallingConvention, parse_argument_list

CDECL, THISCALL = CallingConvention.CDECL, CallingConvention.WINDOWS_THISCALL


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("main(int, char**)", (CDECL, ["int", "char**"])),
        ("Foo::bar(int)", (THISCALL, ["int"])),
        ("start()", (CDECL, [""])),  # an empty list still counts one parameter, as rust-minidump's
        (
            "f(std::map<int, std::pair<int, int> > const&, int)",
            (CDECL, ["std::map<int, std::pair<int, int> > const&", "int"]),
        ),
        ("g(void (*)(int, int), long)", (CDECL, ["void (*)(int, int)", "long"])),
        ("A::B<C>::m(int) const", (THISCALL, ["int"])),
        # the list runs from the first `(` to the last `)`: here it has a `)` closing nothing
        ("ns::f(int)::{lambda()#1}::operator()() const", None),
        ("nothing_to_see", None),
        ("open_only(", None),
        ("h(a>b)", None),  # a `>` closing nothing: rust-minidump's parser is lost
        ("k(a))(", None),
        ("m(x<y)", None),  # unbalanced
    ],
)
def test_parameter_lists(name: str, expected: tuple[CallingConvention, list[str]] | None) -> None:
    assert parse_argument_list(name) == expected
