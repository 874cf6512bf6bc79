"""Compiled copies of the bundled data (issue #14: cold start), so that a start reads pickles, not YAML.

The YAML stays the source. Each bundled file's parsed data (model registry, format table, locales) is also kept
as a pickle named by the sha256 of the file's bytes, in catalog/_compiled/ (gitignored): written the first time
the file is read, or by `python -m bot.cli.prepare` (make install), and read instead of the YAML from then on; a
changed file has a new hash, so its copy is never stale, only missing. Objects built from bundled data (the
registry with the parser's index of its names, engine/models/registry.py; a bundled catalog as strict validation left
it,
catalog/loader.py) are kept the same way under the sha256 of the data and of `code_signature` of the code that
builds them. A copy that cannot be read is a miss; where the directory is not writable (a read-only install) every
start builds from the YAML, as before. Only Cardfit's own files come here; an operator's catalog is always parsed
and validated strictly (catalog/loader.py), and the unpickler refuses every class it was not told to expect.
"""
from __future__ import annotations

import hashlib
import importlib
import io
import os
import pickle
import sys
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import IO, Any, TypeVar, cast

T = TypeVar("T")
COMPILED_DIR = Path(__file__).resolve().parent / "_compiled"
FORMAT = "v1"  # bump when what is stored changes shape
_DATES = frozenset({("datetime", "date"), ("datetime", "datetime")})  # YAML's timestamps: plain data too


def load_bundled(stream: IO[str] | str) -> Any:
    """yaml.safe_load with the C loader where PyYAML has it (the same safe constructors)."""
    import yaml  # here, not at import: a start that finds every compiled copy never needs PyYAML

    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # wheels ship libyaml
    return yaml.load(stream, Loader=loader)  # noqa: S506 - a SafeLoader (C or Python): no arbitrary objects


def load_bundled_file(path: Path) -> Any:
    """The parsed YAML of one bundled file: its compiled copy when there is one for these bytes, else the YAML
    (and the copy is written for the next start)."""
    raw = path.read_bytes()
    compiled = compiled_path(_slot(path), raw)
    data = read_compiled(compiled)
    if data is _MISSING:
        data = load_bundled(raw.decode("utf-8"))
        write_compiled(compiled, data)
    return data


def code_signature(*roots: Path) -> bytes:
    """What decides whether objects built by code are still what that code builds: each .py file's path, size and
    modification time under `roots` (the same test as Python's own .pyc check, and ~50 stat calls, not a read;
    each root's once per run)."""
    return b"\n".join(_signature_of(root) for root in roots)


@cache
def _signature_of(root: Path) -> bytes:
    parts: list[str] = []
    for directory, _subdirectories, files in sorted(os.walk(root)):
        for name in sorted(files):
            if name.endswith(".py"):
                stat = os.stat(os.path.join(directory, name))
                parts.append(f"{directory}/{name}:{stat.st_size}:{stat.st_mtime_ns}")
    return "\n".join(parts).encode()


def load_compiled_objects(inputs: bytes, slot: str, build: Callable[[], T], modules: frozenset[str],
                          shared: Mapping[str, object] | None = None) -> T:
    """Objects built by `build` from bundled data, kept under the sha256 of `inputs` (the data's bytes and the
    code_signature of the code that builds them): unpickled when kept, else built and kept. `modules`: the
    modules whose classes the objects are made of (nothing else is unpickled); `shared`: objects the built ones
    refer to that live elsewhere (the registry and its models): kept by name, so that after loading they are the
    very same objects, not copies."""
    compiled = compiled_path(slot, inputs)
    found = read_compiled(compiled, modules=modules, shared=shared)
    if found is _MISSING:
        found = build()
        write_compiled(compiled, found, shared)
    return cast(T, found)


def compiled_path(slot: str, raw: bytes) -> Path:
    """Where the compiled copy of `raw` (a file's bytes, or all a build depends on) is kept: one file per slot
    (what it is a copy of), named by the sha256; writing a new one removes the slot's older copies."""
    return COMPILED_DIR / f"{slot}.{hashlib.sha256(raw).hexdigest()}.{FORMAT}.pickle"


# A copy made by another Python is a miss (its classes' pickled state may differ), not an error.
FORMAT = f"{FORMAT}-py{sys.version_info[0]}{sys.version_info[1]}"


_ROOT = Path(__file__).resolve().parents[1]


def _slot(path: Path) -> str:
    """'engine/models/data/llama.yaml' -> 'engine-data-models-llama-yaml' (no dots: the name's first part)."""
    try:
        relative = path.resolve().relative_to(_ROOT).as_posix()
    except ValueError:
        relative = path.resolve().as_posix().lstrip("/")
    return relative.replace("/", "-").replace(".", "-")


class _Missing:
    pass


_MISSING: Any = _Missing()


class _DataUnpickler(pickle.Unpickler):
    """Plain data (dicts, lists, strings, numbers, dates) and the classes a caller names, nothing else."""

    def __init__(self, file: IO[bytes], classes: Mapping[tuple[str, str], type], modules: frozenset[str],
                 shared: Mapping[str, object]) -> None:
        super().__init__(file)
        self.classes = classes
        self.modules = modules
        self.shared = shared

    def persistent_load(self, pid: Any) -> Any:
        return self.shared[pid]  # a KeyError (a name this run does not have) makes the copy a miss

    def find_class(self, module: str, name: str) -> Any:
        found = self.classes.get((module, name))
        if found is None and ((module, name) in _DATES or module in self.modules):  # a date, or one of Cardfit's
            found = getattr(importlib.import_module(module), name, None)
            found = found if isinstance(found, type) and found.__module__ == module else None  # own classes
        if found is None:
            raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a compiled copy")
        return found


def read_compiled(path: Path, classes: Mapping[tuple[str, str], type] | None = None,
                  modules: frozenset[str] = frozenset(), shared: Mapping[str, object] | None = None) -> Any:
    """The data kept in `path`, or _MISSING when there is none (or it cannot be read: then the YAML is read).
    `classes`: the (module, name) -> class the copy may contain besides plain data; `modules`: Cardfit's modules
    whose own classes it may contain."""
    try:
        raw = path.read_bytes()
    except OSError:
        return _MISSING
    try:
        return _DataUnpickler(io.BytesIO(raw), classes or {}, modules, shared or {}).load()
    except Exception:  # a truncated or foreign file is as good as none: the YAML is the source
        return _MISSING


class _SharedPickler(pickle.Pickler):
    def __init__(self, file: IO[bytes], shared: Mapping[str, object]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.names = {id(value): name for name, value in shared.items()}

    def persistent_id(self, obj: Any) -> str | None:
        return self.names.get(id(obj))


def write_compiled(path: Path, data: Any, shared: Mapping[str, object] | None = None) -> bool:
    """Keep `data` in `path` (atomically: a concurrent start reads the old file or the new one, never half);
    False where the directory is not writable, which costs speed only."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        buffer = io.BytesIO()
        _SharedPickler(buffer, shared or {}).dump(data)
        temporary.write_bytes(buffer.getvalue())
        os.replace(temporary, path)
        slot = path.name.split(".", 1)[0]
        for older in path.parent.glob(f"{slot}.*.pickle"):
            if older != path:
                older.unlink(missing_ok=True)
    except OSError:
        return False
    return True


def bundled_files() -> list[Path]:
    """Every YAML file Cardfit reads through load_bundled_file."""
    engine = _ROOT / "engine"
    return sorted([*(engine / "models" / "data").glob("*.yaml"), engine / "formats" / "formats.yaml",
                   *(_ROOT / "bot" / "texts" / "locales").glob("*.yaml")])


def compile_files() -> list[Path]:
    """Write the compiled copy of every bundled YAML file (`python -m bot.cli.prepare` does this and the rest)."""
    written = []
    for path in bundled_files():
        raw = path.read_bytes()
        compiled = compiled_path(_slot(path), raw)
        write_compiled(compiled, load_bundled(raw.decode("utf-8")))
        written.append(compiled)
    return written
