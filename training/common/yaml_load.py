"""YAML as the configs read it: safe, and a key given twice in one mapping is an error.

PyYAML keeps the last of two equal keys without a word (``total_steps: 1000`` then
``total_steps: 5`` trains 5 steps); a config that says two things is refused instead.
"""

from __future__ import annotations

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


def safe_load_unique(text: str) -> Any:
    """``yaml.safe_load(text)``, refusing repeated keys (:class:`UniqueKeyLoader`)."""
    return yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 (a SafeLoader)
