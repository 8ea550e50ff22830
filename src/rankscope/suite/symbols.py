"""The names a source file defines, for ``expected_symbols`` judgments.

One keyword pattern covers the languages that introduce a definition with a keyword (Python
``def``/``class``, Go ``func``/``type``, Rust ``fn``/``struct``/``impl``, JavaScript
``function``/``class``, Java and C++ ``class``/``interface``/``enum``/``namespace``). C, C++, Java
and JavaScript/TypeScript also define functions and methods without a keyword
(``bool World::DetectCollision(const Body& a) {``), so files with those extensions are also read
line by line for ``<type and modifiers> name(`` on a line that is not a statement or a call.
JavaScript/TypeScript arrow functions bound to a name (``const f = (x) => ...``) have their own
pattern. Lines are cut to :data:`MAX_LINE` characters so that a minified or hostile file costs
linear time.
"""

from __future__ import annotations

import re

MAX_LINE = 400

_KEYWORD_RE = re.compile(
    r"^\s*(?:(?:export|default|pub(?:\([^)]*\))?|async|public|private|protected|static|abstract"
    r"|final|sealed|unsafe|extern|inline|virtual|const)\s+)*"
    r"(?:def|class|function\*?|func|fn|struct|interface|trait|enum|type|module|namespace|impl"
    r"|mod|union|record|macro_rules!)\s*"
    r"(?:<[^>]*>\s*)?(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)"
)
_ARROW_RE = re.compile(
    r"^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]*)?=\s*(?:async\s+)?"
    r"(?:function\b|\([^)]*\)\s*(?::[^=]*)?=>|[A-Za-z_$][\w$]*\s*=>)"
)
_CALL_NAME_RE = re.compile(r"((?:[A-Za-z_]\w*::)*~?[A-Za-z_]\w*)\s*\(")
# Words that precede "(" in statements, calls and expressions, never a definition's name.
_NOT_NAMES = frozenset(
    [
        "if",
        "for",
        "while",
        "switch",
        "return",
        "else",
        "do",
        "case",
        "catch",
        "sizeof",
        "new",
        "delete",
        "throw",
        "typeof",
        "await",
        "function",
        "elif",
        "defined",
        "assert",
        "super",
        "this",
        "synchronized",
        "foreach",
        "using",
        "lock",
    ]
)
C_FAMILY = frozenset(
    [
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".cxx",
        ".c++",
        ".hpp",
        ".hh",
        ".hxx",
        ".h++",
        ".ino",
        ".java",
        ".js",
        ".jsx",
        ".mjs",
        ".cjs",
        ".ts",
        ".tsx",
        ".mts",
        ".cts",
        ".cs",
    ]
)
_JS = frozenset([".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"])


def _c_family_name(line: str) -> list[str]:
    """The function or method a C-family line defines (the name and, for ``A::b``, ``b``)."""
    stripped = line.strip().lstrip("}").strip()
    if not stripped or stripped.endswith((";", ",")) or stripped.startswith(("#", "//", "*", "/*")):
        return []
    found = _CALL_NAME_RE.search(stripped)
    if found is None:
        return []
    name, prefix = found.group(1), stripped[: found.start()]
    if any(c in prefix for c in "=.()!?\"'") or name in _NOT_NAMES or prefix.startswith("@"):
        return []
    first = prefix.split(maxsplit=1)[0] if prefix.strip() else ""
    if first in _NOT_NAMES:
        return []
    if not prefix.strip() and not stripped.endswith("{"):
        return []  # a bare `name(...)` is a call unless it opens a body (a JS/Java method)
    last = name.rsplit("::", 1)[-1].lstrip("~")
    return [name, last] if last != name else [name]


def symbols_in(text: str, suffix: str = "") -> list[str]:
    """The names ``text`` defines, first occurrence first, without repeats; ``suffix`` is the
    file's extension (``.cpp``), which decides whether the C-family rules apply."""
    suffix = suffix.lower()
    c_family, js = suffix in C_FAMILY, suffix in _JS
    names: dict[str, None] = {}
    for raw in text.splitlines():
        line = raw[:MAX_LINE]
        match = _KEYWORD_RE.match(line)
        if match:
            names.setdefault(match.group(1))
            continue
        if js:
            arrow = _ARROW_RE.match(line)
            if arrow:
                names.setdefault(arrow.group(1))
                continue
        if c_family:
            for name in _c_family_name(line):
                names.setdefault(name)
    return list(names)
