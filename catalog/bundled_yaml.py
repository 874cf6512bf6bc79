"""Reading Cardfit's own YAML files (model registry, format table, locales, bundled catalogs), and their prepared
copies.

The YAML is the source. `make install` (bot/cli/prepare.py, and the Dockerfile) also keeps each file's parsed data
as a pickle in catalog/_compiled/, named by the sha256 of what it was made from, so a changed file finds no copy and
is read from its YAML: a copy is used only when it is current. Nothing else writes there, and only plain data
(dicts, lists, tuples, strings, numbers, dates) is unpickled.
"""
from __future__ import annotations

import hashlib
import io
import pickle
from pathlib import Path
from typing import IO, Any

COMPILED_DIR = Path(__file__).resolve().parent / "_compiled"
_PLAIN_CLASSES = {("datetime", "date"), ("datetime", "datetime")}  # YAML's timestamps


def load_bundled(stream: IO[str] | str) -> Any:
    """yaml.safe_load with PyYAML's C loader where it has one (the same safe constructors)."""
    import yaml

    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(stream, Loader=loader)  # noqa: S506 - a SafeLoader (C or Python): no arbitrary objects


def load_bundled_file(path: Path) -> Any:
    """The parsed YAML of one file: its prepared copy when there is a current one, else the YAML."""
    raw = path.read_bytes()
    data = read_copy(raw)
    return load_bundled(raw.decode("utf-8")) if data is None else data


def copy_path(source: bytes) -> Path:
    """Where the prepared copy of what was made from `source` (a file's bytes, or all a copy depends on) lives."""
    return COMPILED_DIR / f"{hashlib.sha256(source).hexdigest()}.pickle"


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _PLAIN_CLASSES:
            raise pickle.UnpicklingError(f"{module}.{name} is not plain data")
        return super().find_class(module, name)


def read_copy(source: bytes) -> Any:
    """The prepared copy made from `source`, or None when there is none (or it cannot be read)."""
    try:
        raw = copy_path(source).read_bytes()
    except OSError:
        return None
    try:
        return _PlainUnpickler(io.BytesIO(raw)).load()
    except Exception:  # a truncated or foreign file is as good as none: the YAML is the source
        return None


def write_copy(source: bytes, data: Any) -> Path:
    """Keep `data` as the copy made from `source` (bot/cli/prepare.py only: nothing writes here at run time)."""
    path = copy_path(source)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
    return path


def bundled_files() -> list[Path]:
    """Every YAML file Cardfit reads through load_bundled_file."""
    root = Path(__file__).resolve().parents[1]
    engine = root / "engine"
    return sorted([*(engine / "models" / "data").glob("*.yaml"), engine / "formats" / "formats.yaml",
                   *(root / "bot" / "texts" / "locales").glob("*.yaml")])
