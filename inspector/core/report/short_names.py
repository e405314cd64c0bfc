"""Shorter forms of long C++ function names, for a column that cannot show them whole.

A demangled C++ name from a template-heavy program (`std::__invoke_impl<void,
engine::Overloaded<…>, engine::Mesh&>(std::__invoke_other, …)`) can be hundreds of
characters long, and the part a reader needs, the function's own name, comes last. As
Visual Studio and Qt Creator do, we shorten by structure rather than by cutting: first the
template arguments collapse to `<…>`, then the parameter lists to `(…)` (a lambda's call
operator goes too: `{lambda#1}`), and last the leading namespaces (`std::__detail::`) while
two names of the path remain. The full name stays in tooltips and in every copy.

`shortened_forms` gives the forms from longest to shortest, so a view can pick the first
that fits its width.
"""

from __future__ import annotations

import re

ELLIPSIS = "…"

# `operator<`, `operator<<=`, `operator->`, `operator()`: brackets that are part of a name.
_OPERATOR_TOKENS = ("<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=", "->", "()", "<", ">")


def _collapse(name: str, *, angles: bool, parens: bool) -> str:
    """`name` with the contents of its outermost `<…>` (angles) and/or `(…)` (parens) replaced by `…`.

    Nesting is tracked for both bracket kinds together, so a `(` inside a template argument
    list (a function type) or a `<` inside a parameter list is inside the collapsed part.
    Empty lists stay as they are (`f()`, `g<>`), as do the `(anonymous namespace)` and
    `{lambda(…)#1}` markers' braces (only their parentheses collapse)."""
    out: list[str] = []
    stack: list[str] = []  # the open brackets we are inside, outermost first
    collapsing = 0  # depth in `stack` at which the collapsed bracket opened (0: none)
    i = 0
    n = len(name)
    while i < n:
        if name.startswith("operator", i) and (i == 0 or not (name[i - 1].isalnum() or name[i - 1] == "_")):
            end = i + len("operator")
            token = next((t for t in _OPERATOR_TOKENS if name.startswith(t, end)), None)
            if token is not None:
                if not collapsing:
                    out.append(name[i : end + len(token)])
                i = end + len(token)
                continue
        char = name[i]
        if char in "<(":
            wanted = angles if char == "<" else parens
            special = char == "(" and name.startswith("(anonymous namespace)", i)
            if special:
                if not collapsing:
                    out.append("(anonymous namespace)")
                i += len("(anonymous namespace)")
                continue
            closing = ">" if char == "<" else ")"
            empty = i + 1 < n and name[i + 1] == closing
            stack.append(char)
            if not collapsing:
                out.append(char)
                if wanted and not empty:
                    out.append(ELLIPSIS)
                    collapsing = len(stack)
        elif char in ">)" and stack:
            depth = len(stack)
            stack.pop()
            if collapsing == depth:
                collapsing = 0
                out.append(char)
            elif not collapsing:
                out.append(char)
        elif not collapsing:
            out.append(char)
        i += 1
    return "".join(out)


def collapse_templates(name: str) -> str:
    """`std::map<std::string, int>::find(std::string const&)` → `std::map<…>::find(std::string const&)`."""
    return _collapse(name, angles=True, parens=False)


_LAMBDA = re.compile(r"\{lambda\((?:…)?\)#(\d+)\}")
_LAMBDA_CALL = re.compile(r"(\{lambda#\d+\})::operator\(\)\((?:…)?\)(?: const)?")
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _without_lambda_calls(collapsed: str) -> str:
    """`run()::{lambda(…)#1}::operator()(…) const` → `run()::{lambda#1}` (the call is implied)."""
    return _LAMBDA_CALL.sub(r"\1", _LAMBDA.sub(r"{lambda#\1}", collapsed))


def _without_namespaces(collapsed: str) -> str:
    """Leading plain names (namespaces, mostly) dropped while more than two names remain."""
    parts = collapsed.split("::")
    while len(parts) > 2 and _PLAIN.fullmatch(parts[0]):
        parts.pop(0)
    return "::".join(parts)


def shortened_forms(name: str) -> list[str]:
    """The forms of `name` from the full one to the shortest, without repeats: the name, its
    template arguments collapsed, then its parameter lists (and lambdas' call operators), then
    its leading namespaces."""
    forms = [name]
    collapsed = _without_lambda_calls(_collapse(name, angles=True, parens=True))
    for form in (collapse_templates(name), collapsed, _without_namespaces(collapsed)):
        if form != forms[-1]:
            forms.append(form)
    return forms
