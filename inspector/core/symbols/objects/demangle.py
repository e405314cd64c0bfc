"""Function names as Mozilla's `dump_syms` writes them, from the raw names an object holds.

dump_syms (the tool the `.sym` route's files come from) cleans a name in two steps, and the
object route must do the same so that both routes name a frame alike:

1. compiler suffixes are cut off the end (`.cold`, `.constprop.0`, `.isra.0`, `.part.0`,
   `.llvm.123`, `.lto_priv.0`, `.localalias`, `.str.1`, ` [clone .cold]`) — for names of
   functions from debug information always, for symbol-table names only when they are mangled;
2. C++ names are demangled without return types (`DemangleOptions::complete().return_type(false)`:
   parameters, `const`, template arguments).

The demangler is the C++ runtime's own `__cxa_demangle` (libstdc++ on Linux, libc++abi on
macOS), loaded with ctypes on first use: its output has the same spelling as the `cpp_demangle`
crate dump_syms uses (`char const*`, `> >`, `(anonymous namespace)`), and it is on every machine
that runs C++ programs, so no package is needed. It prints a return type before template
functions (`int std::foo<int>(int)`); `_drop_return_type` removes it by finding where the
name starts at bracket depth 0. Where no runtime is found (Windows), names stay mangled.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import re
import sys
import threading
from typing import Any

#: dump_syms' `fix_symbol_name` (common.rs): compiler-generated suffixes at the end of a name
_COMPILER_SUFFIXES = re.compile(
    r"((\.(cold|constprop|llvm|localalias|lto_priv|isra|part|str)(\.[0-9]+)?)|( ?\[clone[^\]]*\] ?))+$"
)

#: symbolic's language numbers (symbolic_common::Language) as the SymCache stores them
LANG_UNKNOWN_SYMBOL = 0xFFFF_FFFF  # a symbol-table entry: no language recorded


#: the same run of suffixes, for `fullmatch` from a position where one can start
_SUFFIX_RUN = re.compile(_COMPILER_SUFFIXES.pattern.removesuffix("$"))
_SUFFIX_START = re.compile(r"[.\[]| \[")


def fix_symbol_name(name: str) -> str:
    """Cut compiler suffixes and spell the anonymous namespace as GCC does (dump_syms' `fix_symbol_name`)."""
    if "." in name or "[" in name:
        name = _cut_suffixes(name)
    if "`" in name:
        name = name.replace("`anonymous namespace'", "(anonymous namespace)")
    return name


def _cut_suffixes(name: str) -> str:
    """`_COMPILER_SUFFIXES.sub("", name)`, without trying the pattern at every position of a long
    name: only where a suffix can start (`.`, `[`, ` [`), leftmost first, as a regex search would."""
    for start in _SUFFIX_START.finditer(name):
        if _SUFFIX_RUN.fullmatch(name, start.start()):
            return name[: start.start()]
    return name


def is_mangled_cpp(name: str) -> bool:
    """symbolic's language detection for the Itanium C++ ABI (`_Z…`, `__Z…` on macOS)."""
    return name.startswith(("_Z", "__Z", "___Z"))


# ---- lazy demangling: names kept mangled in the converted file, demangled when a lookup returns one
#
# Demangling and cleaning every name of a big C++ library costs most of a conversion (libtorch_cpu:
# 342K template-heavy names, tens of seconds), while a walk shows a few hundred. So the converted
# file keeps each name as dump_syms would have it *before* demangling (compiler suffixes cut), says
# so in an `INFO NAMES mangled` line, and `SymbolFile` passes every FUNC, PUBLIC and INLINE_ORIGIN
# name it returns through `display_name`, which does the rest once per name.

#: the INFO line that marks a file whose Itanium C++ names are still mangled
MANGLED_NAMES_INFO = "NAMES mangled"


def stored_function_name(raw: str) -> str:
    """A FUNC / INLINE_ORIGIN name as kept in a converted file: final, or mangled for `display_name`.

    The function's language is not asked: it would only matter for a C function whose name looks
    mangled (`_Z…`), which dump_syms keeps and `display_name` would demangle; no compiler names
    C functions so."""
    return _without_controls(fix_symbol_name(raw))


_displayed: dict[str, str] = {}
_DISPLAYED_MAX = 65536


def display_name(stored: str) -> str:
    """The name dump_syms writes, from a stored one (cleaned and demangled once, on first use)."""
    if not is_mangled_cpp(stored):
        return stored
    found = _displayed.get(stored)
    if found is None:
        fixed = fix_symbol_name(stored)  # a PUBLIC's suffixes (a FUNC's are cut already)
        found = _without_controls(demangle(fixed) or fixed)
        if len(_displayed) >= _DISPLAYED_MAX:
            _displayed.clear()  # a bound, not an LRU: a walk needs far fewer
        _displayed[stored] = found
    return found


def _without_controls(name: str) -> str:
    # dump_syms removes ASCII control characters from inline origin names (`\n` would break a line)
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return "".join(c for c in name if not (ord(c) < 0x20 or ord(c) == 0x7F))
    return name


class _Runtime:
    """`__cxa_demangle` and `free`, loaded once; None when this system has no C++ runtime."""

    _lock = threading.Lock()
    _loaded = False
    demangle: Any = None
    free: Any = None

    @classmethod
    def get(cls) -> _Runtime | None:
        with cls._lock:
            if not cls._loaded:
                cls._loaded = True
                cls._load()
        return cls() if cls.demangle is not None else None

    @classmethod
    def _load(cls) -> None:
        names = ["c++abi", "c++"] if sys.platform == "darwin" else ["stdc++"]
        for name in names:
            found = ctypes.util.find_library(name)
            candidates = [found] if found else []
            if name == "stdc++":
                candidates.append("libstdc++.so.6")
            for candidate in candidates:
                try:
                    lib = ctypes.CDLL(candidate)
                    function = getattr(lib, "__cxa_demangle")  # (a literal would be name-mangled here)
                except (OSError, AttributeError):
                    continue
                function.restype = ctypes.c_void_p
                function.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
                libc = ctypes.CDLL(None)
                libc.free.argtypes = [ctypes.c_void_p]
                libc.free.restype = None
                cls.demangle, cls.free = function, libc.free
                return


def demangle(mangled: str) -> str | None:
    """The demangled C++ name without a return type, or None (not a valid name, or no runtime)."""
    runtime = _Runtime.get()
    if runtime is None:
        return None
    try:
        raw = mangled.encode("utf-8")
    except UnicodeEncodeError:
        return None
    if b"\x00" in raw or len(raw) > 65536:
        return None
    status = ctypes.c_int(0)
    pointer = runtime.demangle(raw, None, None, ctypes.byref(status))
    if not pointer:
        return None
    try:
        text = ctypes.string_at(pointer).decode("utf-8", "replace")
    finally:
        runtime.free(pointer)
    if status.value != 0:
        return None
    return _like_cpp_demangle(_drop_return_type(text))


_OPEN = "<(["
_CLOSE = ">)]"
_SIGNIFICANT = re.compile(r"(?<![A-Za-z0-9_])operator(?![A-Za-z0-9_])|[<>()\[\] ]")
_BRACKETS = re.compile(r"[<>()\[\]]")


def _drop_return_type(text: str) -> str:
    """`int ns::f<int>(char)` → `ns::f<int>(char)`; names without a return type are returned as they are.

    The return type ends at the last space at bracket depth 0 before the parameter list; the
    `<`, `>`, `(` and `)` of operator names (`operator<`, `operator()`, `operator->`) are not
    brackets, and `operator<` followed by a space and template arguments keeps its space.
    """
    if not text.endswith((")", ") const", ") volatile", ") const volatile", ") &", ") &&", ") const&")):
        return text  # not a function (a variable or a special name): nothing to drop
    first = text.find("(")
    prefix = text[:first]
    if " " not in prefix and "<" not in prefix and "operator" not in prefix:
        return text  # no bracket and no space before the parameters: no return type (most names; fast)
    depth = 0
    last_space = -1
    in_operator = False  # after `operator` every space up to the parameters belongs to the name
    n = len(text)
    # only brackets, spaces and `operator` matter: the regex skips the other characters in C
    match = _SIGNIFICANT.search(text)
    while match is not None:
        i = match.start()
        c = text[i]
        if c == "o":  # `operator` as a whole word
            if depth == 0:
                in_operator = True
                k = match.end()
                while k < n and text[k] == " ":
                    k += 1
                if text.startswith(("()", "[]"), k):
                    k += 2
                else:
                    while k < n and text[k] in "<>=!+-*/%^&|~,":
                        k += 1  # the operator's own characters: `operator<<`, `operator->*`, `operator<`
                match = _SIGNIFICANT.search(text, k)
                continue
        elif c in _OPEN:
            if c == "(" and depth == 0:
                break  # the parameter list of the function itself
            depth += 1
        elif c in _CLOSE:
            depth = max(0, depth - 1)
        elif depth == 0 and not in_operator:  # a space
            last_space = i
        match = _SIGNIFICANT.search(text, i + 1)
    if last_space < 0:
        return text
    # outside brackets and operator names, a space before the parameters only follows a return type
    return text[last_space + 1 :]


def _top_level_split(text: str, separator: str) -> list[str]:
    """Split at `separator` characters outside brackets."""
    parts: list[str] = []
    depth = 0
    start = 0
    for i, c in enumerate(text):
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth = max(0, depth - 1)
        elif c == separator and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _matching_open(text: str, close: int) -> int:
    """Index of the `<` matching the `>` at `close`, or -1."""
    depth = 0
    for i in range(close, -1, -1):
        if text[i] == ">":
            depth += 1
        elif text[i] == "<":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _like_cpp_demangle(text: str) -> str:
    """Drop the first parameter of a constructor template, as the `cpp_demangle` crate does.

    dump_syms' demangler reads the first parameter of a constructor that has template arguments
    of its own (`std::pair<…>::pair<char const (&) [5], …>(char const (&) [5], …)`) as a return
    type and leaves it out: `…::pair<…>(char const (&) [9])`. The `.sym` files name such frames
    that way, so the object route does too (a documented imitation of a demangler bug).
    """
    if "operator" in text or not text.endswith(")"):
        return text
    first = text.find("(")
    if "<" not in text[:first]:
        return text  # no template arguments before the parameters: not a constructor template (fast)
    paren = _parameters_start(text)
    if paren <= 0 or text[paren - 1] != ">":
        return text
    open_angle = _matching_open(text, paren - 1)
    if open_angle <= 0:
        return text
    components = _scope_components(text[:open_angle])
    if len(components) < 2:
        return text
    function = components[-1]
    scope = components[-2]
    if "<" in scope:
        scope = scope[: scope.index("<")]
    if function != scope:
        return text
    parameters = _top_level_split(text[paren + 1 : -1], ",")
    if len(parameters) < 1 or parameters == [""]:
        return text
    kept = ",".join(parameters[1:]).strip()
    return f"{text[: paren + 1]}{kept})"


def _parameters_start(text: str) -> int:
    """Index of the `(` opening the function's parameter list (the first one outside brackets)."""
    depth = 0
    for match in _BRACKETS.finditer(text):
        c = match.group()
        if c == "(" and depth == 0:
            return match.start()
        if c in _OPEN:
            depth += 1
        else:
            depth = max(0, depth - 1)
    return -1


def _scope_components(name: str) -> list[str]:
    """`a::b<c::d>::e` → [`a`, `b<c::d>`, `e`] (splits at `::` outside brackets)."""
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    while i < len(name):
        c = name[i]
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth = max(0, depth - 1)
        elif depth == 0 and name.startswith("::", i):
            parts.append(name[start:i])
            i += 2
            start = i
            continue
        i += 1
    parts.append(name[start:])
    return parts
