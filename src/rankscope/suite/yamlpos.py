"""YAML reading that remembers where each value came from, for error messages with line numbers."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from rankscope.errors import ConfigError

PathKey = tuple[str | int, ...]


def load_yaml_with_lines(text: str, source: str) -> tuple[Any, dict[PathKey, int]]:
    """Parse YAML text into plain data plus ``{path: 1-based line}`` for every node."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = None if mark is None else mark.line + 1
        raise ConfigError(
            f"not valid YAML: {error.problem or error.context}",
            path=source,
            line=line,
            hint="fix the YAML syntax at that line (indentation, quotes, a missing ':')",
        ) from None
    except yaml.YAMLError as error:
        raise ConfigError(f"not valid YAML: {error}", path=source) from None
    lines: dict[PathKey, int] = {}
    if node is not None:
        _walk(node, (), lines)
    return data, lines


def _walk(node: yaml.Node, path: PathKey, lines: dict[PathKey, int]) -> None:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node)
            _walk(value_node, (*path, key), lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*path, i), lines)


def format_path(path: Sequence[str | int]) -> str:
    """``("queries", 3, "kind")`` -> ``queries[3].kind``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def line_of(path: Sequence[str | int], lines: dict[PathKey, int]) -> int | None:
    """The line of the node at ``path``, or of its nearest ancestor that exists in the file."""
    key = tuple(path)
    while True:
        if key in lines:
            return lines[key]
        if not key:
            return None
        key = key[:-1]


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            "suite file not found", path=path, hint="check the path (relative to where you run)"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read the suite file: {error}", path=path) from None
