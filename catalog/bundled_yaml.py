"""Reading the project's own bundled YAML (model registry, format table, locales) fast: a compiled copy per file.

The YAML stays the source. Each file's parsed data is also kept as a pickle named by the sha256 of the file's
bytes (catalog/_compiled/, gitignored), written the first time a file is read (or by `python -m
catalog.bundled_yaml`, which `make install` runs) and read instead of the YAML from then on: a changed YAML file
has a new hash, so a compiled copy can never be stale, only missing. Reading a compiled copy costs ~2 ms against
~90 ms for the registry through libyaml's C loader (and PyYAML's import, ~20 ms, is not paid at all). Where the
directory is not writable (an installed, read-only package) every start reads the YAML, with the C loader.
It is only for trusted files that ship with Cardfit: operator catalogs go through catalog.loader, whose
hostile-input rules (tested) rely on the Python loader.
"""
from __future__ import annotations

import datetime
import hashlib
import io
import os
import pickle
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

COMPILED_DIR = Path(__file__).resolve().parent / "_compiled"
FORMAT = "v1"  # bump when what is stored changes shape
_ALLOWED_GLOBALS: dict[tuple[str, str], type] = {("datetime", "date"): datetime.date,
                                                  ("datetime", "datetime"): datetime.datetime}


def load_bundled(stream: IO[str] | str) -> Any:
    """yaml.safe_load with the C loader where PyYAML has it (the same safe constructors)."""
    import yaml  # here, not at import: a start that finds every compiled copy never needs PyYAML

    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # wheels ship libyaml
    return yaml.load(stream, Loader=loader)  # noqa: S506 - a SafeLoader (C or Python): no arbitrary objects


def load_bundled_file(path: Path) -> Any:
    """The parsed YAML of one bundled file: its compiled copy when there is one for these bytes, else the YAML
    (and the copy is written for the next start)."""
    raw = path.read_bytes()
    compiled = compiled_path(raw)
    data = read_compiled(compiled)
    if data is _MISSING:
        data = load_bundled(raw.decode("utf-8"))
        write_compiled(compiled, data)
    return data


def compiled_path(raw: bytes, kind: str = "yaml") -> Path:
    return COMPILED_DIR / f"{hashlib.sha256(raw).hexdigest()}.{kind}.{FORMAT}.pickle"


class _Missing:
    pass


_MISSING: Any = _Missing()


class _DataUnpickler(pickle.Unpickler):
    """Plain data (dicts, lists, strings, numbers, dates) and the classes a caller names, nothing else."""

    def __init__(self, file: IO[bytes], classes: Mapping[tuple[str, str], type]) -> None:
        super().__init__(file)
        self.classes = classes

    def find_class(self, module: str, name: str) -> Any:
        found = _ALLOWED_GLOBALS.get((module, name)) or self.classes.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a compiled copy")
        return found


def read_compiled(path: Path, classes: Mapping[tuple[str, str], type] | None = None) -> Any:
    """The data kept in `path`, or _MISSING when there is none (or it cannot be read: then the YAML is read).
    `classes`: the (module, name) -> class the copy may contain besides plain data."""
    try:
        raw = path.read_bytes()
    except OSError:
        return _MISSING
    try:
        return _DataUnpickler(io.BytesIO(raw), classes or {}).load()
    except Exception:  # a truncated or foreign file is as good as none: the YAML is the source
        return _MISSING


def write_compiled(path: Path, data: Any) -> bool:
    """Keep `data` in `path` (atomically: a concurrent start reads the old file or the new one, never half);
    False where the directory is not writable, which costs speed only."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_bytes(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(temporary, path)
    except OSError:
        return False
    return True


def bundled_files() -> list[Path]:
    """Every YAML file Cardfit reads through load_bundled_file."""
    root = Path(__file__).resolve().parents[1]
    return sorted([*(root / "engine" / "data").rglob("*.yaml"), *(root / "bot" / "locales").glob("*.yaml")])


def compile_all() -> int:
    """Write the compiled copy of every bundled file and remove copies no file has any more; the count written."""
    COMPILED_DIR.mkdir(parents=True, exist_ok=True)
    wanted: set[Path] = set()
    for path in bundled_files():
        raw = path.read_bytes()
        compiled = compiled_path(raw)
        wanted.add(compiled)
        write_compiled(compiled, load_bundled(raw.decode("utf-8")))
    from catalog.loader import compile_bundled_catalogs  # the catalogs' own compiled form (validated objects)

    wanted.update(compile_bundled_catalogs())
    for old in COMPILED_DIR.glob("*.pickle"):
        if old not in wanted:
            old.unlink(missing_ok=True)
    return len(wanted)


if __name__ == "__main__":  # `python -m catalog.bundled_yaml`: build the compiled copies (make install runs it)
    print(f"compiled {compile_all()} bundled data files into {COMPILED_DIR}", file=sys.stderr)
