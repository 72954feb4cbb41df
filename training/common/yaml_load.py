"""YAML as the configs read it: safe, and a key given twice in one mapping is an error.

PyYAML keeps the last of two equal keys without a word (``total_steps: 1000`` then
``total_steps: 5`` trains 5 steps); a config that says two things is refused instead. Numbers
are read as YAML 1.2 reads them: ``5e-1`` is a float (YAML 1.1, PyYAML's, made it a string),
in a nested mapping too.
"""

from __future__ import annotations

import re
from typing import Any

import yaml


class UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a mapping with a repeated key (merge keys ``<<`` may still be
    overridden, as YAML intends)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                repeated = key in seen
            except TypeError:  # an unhashable key: PyYAML's own error names it
                continue
            if repeated:
                raise yaml.constructor.ConstructorError(None, None, f"found the key {key!r} twice in one mapping",
                                                        key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


# YAML 1.2's floats: PyYAML (YAML 1.1) reads 1e-3 and 5e-1, exponents without a dot, as strings
UniqueKeyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
                   |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
                   |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
                   |[-+]?\.(?:inf|Inf|INF)
                   |\.(?:nan|NaN|NAN))$""", re.X),
    list("-+0123456789."))


def safe_load_unique(text: str) -> Any:
    """``yaml.safe_load(text)``, refusing repeated keys (:class:`UniqueKeyLoader`)."""
    return yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 (a SafeLoader)
