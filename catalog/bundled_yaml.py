"""Reading the project's own bundled YAML (model registry, format table, locales) fast: libyaml's C loader.

PyYAML's pure-Python loader was most of `cardfit ask`'s cold start (the 152-model registry alone took ~0.7 s);
the C loader reads the same documents in a fraction of that. It is only for trusted files that ship with Cardfit:
operator catalogs go through catalog.loader, whose hostile-input rules (tested) rely on the Python loader.
"""
from __future__ import annotations

from typing import IO, Any

import yaml

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # wheels ship libyaml


def load_bundled(stream: IO[str] | str) -> Any:
    """yaml.safe_load with the C loader where PyYAML has it (the same safe constructors)."""
    return yaml.load(stream, Loader=_Loader)  # noqa: S506 - a SafeLoader (C or Python): no arbitrary objects
