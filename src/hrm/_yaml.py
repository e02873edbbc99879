"""Safe, bounded YAML loading: every YAML file hrm reads goes through here.

`CSafeLoader` is PyYAML's own safe loader in C: the same schema and the same `yaml.YAMLError`s
with line marks, about ten times faster. Opening a stack parses every agent definition (14
files for the built-in set), which in pure Python cost `hrm turn` ~45 ms a process.

Safe loading alone does not bound what a document costs. Aliases make a small file a huge
value: nine anchors of nine aliases each (a "billion laughs") parse in milliseconds into a
graph whose expansion has 10⁹ leaves, and whatever walks the value next (validation, scrubbing,
JSON) runs until memory is gone. So a document is composed first, and its node graph checked
before any value is built: at most `MAX_ALIASES` alias uses, at most `MAX_NODES` nodes added
by expanding them (counted without expanding), no alias inside what it names; and the text
is bounded (`MAX_BYTES`). A breach raises `YAMLLimitError`, a `yaml.YAMLError`, so every caller's
handling of bad YAML (with the file's name) handles it too.
"""

from __future__ import annotations

import yaml

TYPE_CHECKING = False
if TYPE_CHECKING:
    from os import PathLike
    from typing import Any

__all__ = ["MAX_ALIASES", "MAX_BYTES", "MAX_NODES", "YAMLLimitError", "load_file", "safe_load"]

_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_BYTES = 1 << 20
"""The largest YAML text hrm parses (1 MB): configs, definitions and handoffs are far smaller."""
MAX_ALIASES = 100
"""Alias uses (``*name``) one document may hold; real files use a handful."""
MAX_NODES = 100_000
"""Nodes aliases may add to a document when each is expanded to a copy of what it names."""


class YAMLLimitError(yaml.YAMLError):
    """A YAML text over one of the bounds: too large, too many aliases, or expanding too far."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = None


def safe_load(
    text: str,
    *,
    max_bytes: int = MAX_BYTES,
    max_aliases: int = MAX_ALIASES,
    max_nodes: int = MAX_NODES,
) -> Any:
    """`yaml.safe_load`, through libyaml when available, within the bounds.

    Raises:
        yaml.YAMLError: invalid YAML, or `YAMLLimitError` past a bound.
    """
    if len(text) > max_bytes:
        raise YAMLLimitError(f"the text is longer than the {max_bytes:,} characters hrm parses")
    loader = _SAFE_LOADER(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError as exc:  # the pure-Python composer on very deep nesting
            raise YAMLLimitError("the document nests too deeply") from exc
        if node is None:
            return None
        _check_graph(node, max_aliases=max_aliases, max_nodes=max_nodes)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def load_file(
    path: str | PathLike[str],
    *,
    what: str = "YAML file",
    max_bytes: int = MAX_BYTES,
    root: str | PathLike[str] | None = None,
) -> Any:
    """Read and parse a YAML file: a regular file (inside `root`, when given), bounded.

    Raises:
        HRMError: ``PARSE_ERROR`` naming the file (and line) for invalid YAML or a breached
            bound; the errors of `hrm._paths.read_text` when it cannot be read.
    """
    from hrm._paths import read_text
    from hrm.errors import HRMError

    text = read_text(path, max_bytes=max_bytes, root=root, what=what)
    try:
        return safe_load(text, max_bytes=max_bytes)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise HRMError.parse_error(
            f"invalid {what}: {problem}",
            path=str(path),
            line=mark.line + 1 if mark is not None else None,
        ) from exc


def _check_graph(root: yaml.Node, *, max_aliases: int, max_nodes: int) -> None:
    """Count alias uses and the expanded size of a composed document, without expanding it.

    An alias is the composer handing back a node it already built, so every visit of a node
    after its first is an alias use. A node's expanded size is one plus its children's,
    memoised per node: linear in the graph however far it would expand. Aliases may add at
    most `max_nodes` nodes to what the text itself holds.
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    aliases = 0
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            continue
        if key in sizes:
            aliases += 1  # pushed as new, then built through another use first
        else:
            stack.append((node, True))
            on_path.add(key)
            for child in _children(node):
                child_key = id(child)
                if child_key in on_path:
                    raise YAMLLimitError("an alias refers to a node that contains it")
                if child_key in sizes:
                    aliases += 1
                else:
                    stack.append((child, False))
        if aliases > max_aliases:
            raise YAMLLimitError(f"the document uses more than {max_aliases} aliases")
    if sizes[id(root)] - len(sizes) > max_nodes:
        raise YAMLLimitError(
            f"the document's aliases expand it by more than {max_nodes:,} nodes"
        )


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []
