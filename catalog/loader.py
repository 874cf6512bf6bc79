"""Loading a catalog (bundled name or YAML path) with one clear error naming the file, the card and the field.

Every file is validated strictly (catalog.validation) except a bundled catalog loaded by name that has a current
prepared copy (`make install` validated it and kept its plain data, catalog.bundled_yaml). PyYAML and pydantic are
imported only when a file is validated, so `cardfit ask` on a bundled catalog pays for neither.
"""
from __future__ import annotations

import hashlib
import os
import stat
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog import bundled_yaml, schema
from catalog.schema import Catalog

if TYPE_CHECKING:
    import yaml
    from pydantic import ValidationError

DATA_DIR = Path(__file__).resolve().parent / "data"
BUNDLED = ("gpurenthub", "gpuwithcrypto")


class CatalogError(ValueError):
    """A catalog that cannot be used; the message is meant for a human (operator or admin)."""


class _NoSuchFile(CatalogError):
    """The path names no file (load_catalog adds the bundled names: a mistyped name looks like a path)."""


@dataclass(frozen=True)
class LoadedCatalog:
    """A catalog with the file it came from and the sha256 of its bytes."""

    catalog: Catalog
    path: Path
    sha256: str


def resolve_catalog_path(name_or_path: str) -> Path:
    """A bundled catalog name (`gpurenthub`) or a path to a YAML file."""
    candidate = name_or_path.strip()
    if candidate in BUNDLED:
        return DATA_DIR / f"{candidate}.yaml"
    return Path(candidate).expanduser()


MAX_CATALOG_BYTES = 1024 * 1024  # the bundled catalogs are under 10 KiB; a 200-card catalog is about 100 KiB


def parse_catalog_bytes(raw: bytes, source: str = "<bytes>") -> Catalog:
    """The one strict way from a file's bytes to a catalog (start-up, `catalog check`, /reload): at most
    MAX_CATALOG_BYTES, strict UTF-8, then parse_catalog. Raises CatalogError naming `source`."""
    if len(raw) > MAX_CATALOG_BYTES:
        raise CatalogError(f"{source}: too large ({len(raw):,} bytes; a catalog is at most "
                           f"{MAX_CATALOG_BYTES:,} bytes)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogError(f"{source}: not UTF-8 text (byte {exc.start}: {raw[exc.start:exc.start + 1]!r})") from None
    return parse_catalog(text, source)


def parse_catalog(text: str, source: str = "<string>") -> Catalog:
    """Validate YAML text as a catalog; raise CatalogError with file, card and field on failure (and nothing
    else: whatever YAML or the schema can throw at a hostile file ends here as one line)."""
    if len(text) > MAX_CATALOG_BYTES:
        raise CatalogError(f"{source}: too large ({len(text):,} characters; a catalog is at most "
                           f"{MAX_CATALOG_BYTES:,} bytes)")
    data = _load_yaml(text, source)
    if not isinstance(data, dict):
        raise CatalogError(f"{source}: expected a mapping at the top level, found {type(data).__name__}")
    from pydantic import ValidationError

    from catalog.validation import validate_catalog

    try:
        return validate_catalog(data)
    except ValidationError as exc:
        raise CatalogError(_one_line(_describe(source, data, exc))) from None
    except RecursionError:
        raise CatalogError(f"{source}: nested too deeply") from None


@cache
def _catalog_loader() -> type[yaml.SafeLoader]:
    import yaml

    class CatalogLoader(yaml.SafeLoader):
        """SafeLoader whose value errors carry the node's line: `updated: 2026-13-45` (a date PyYAML builds and
        Python refuses), a 5,000-digit integer (Python's int-string limit), `!!bool maybe` (a KeyError inside)."""

        def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
            try:
                return super().construct_object(node, deep)
            except (yaml.YAMLError, RecursionError):
                raise
            except Exception as exc:  # whatever a constructor throws at a hostile value is that value's error
                raise yaml.constructor.ConstructorError(None, None, f"{exc.__class__.__name__}: {exc}",
                                                        node.start_mark) from None

    return CatalogLoader


def _load_yaml(text: str, source: str) -> Any:
    import yaml

    try:
        return yaml.load(text, Loader=_catalog_loader())  # noqa: S506 - a SafeLoader: no arbitrary objects
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CatalogError(_one_line(f"{source}: not valid YAML{where}: {problem}")) from None
    except RecursionError:  # [[[[...]]]] a few hundred deep: PyYAML's composer recurses
        raise CatalogError(f"{source}: not valid YAML: nested too deeply") from None
    except (ValueError, OverflowError, TypeError, LookupError) as exc:  # anything _CatalogLoader did not catch
        raise CatalogError(_one_line(f"{source}: not valid YAML: cannot read a value: {exc}")) from None


def _one_line(message: str) -> str:
    return " ".join(message.split("\n"))


# A read that has not finished by then is a hung volume (a network mount whose server is gone): the catalog is
# refused, and the reading thread, stuck in the kernel, is left behind as a daemon so it cannot hold up the exit.
READ_TIMEOUT_S = 10.0
_stuck_reads: dict[Path, threading.Thread] = {}
_stuck_lock = threading.Lock()


def read_catalog_file(path: Path, timeout_s: float | None = None) -> bytes:
    """A catalog file's bytes, the one way every catalog read goes (start, watch job, /reload): a regular file
    only (a FIFO would block for a writer, /dev/zero never ends), at most MAX_CATALOG_BYTES + 1 bytes (enough to
    say "too large"), within `timeout_s` (READ_TIMEOUT_S). Raises CatalogError, one line naming the file."""
    timeout_s = READ_TIMEOUT_S if timeout_s is None else timeout_s
    hung = CatalogError(f"{path}: cannot read: no answer within {timeout_s:g} s (a hung volume?)")
    with _stuck_lock:
        earlier = _stuck_reads.get(path)
        if earlier is not None and earlier.is_alive():  # one hung thread per file, not one more per watch tick
            raise hung
        _stuck_reads.pop(path, None)
    result: list[bytes | Exception] = []
    reader = threading.Thread(target=_read_into, args=(path, result), name="catalog-read", daemon=True)
    reader.start()
    reader.join(timeout_s)
    if reader.is_alive():
        with _stuck_lock:
            _stuck_reads[path] = reader
        raise hung
    outcome = result[0]
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def _read_into(path: Path, result: list[bytes | Exception]) -> None:
    try:
        result.append(_read_regular(path))
    except Exception as exc:  # handed to the waiting thread, which raises it
        result.append(exc)


def _read_regular(path: Path) -> bytes:
    try:
        # O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer (no effect on a regular file)
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise _NoSuchFile(f"{path}: no such catalog file") from None
    except OSError as exc:
        raise CatalogError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise CatalogError(f"{path}: not a regular file (a catalog is a YAML file)")
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            return handle.read(MAX_CATALOG_BYTES + 1)
    except OSError as exc:
        raise CatalogError(f"{path}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(descriptor)


def load_catalog(name_or_path: str, *, compiled: bool = True) -> LoadedCatalog:
    """`compiled=False` (`catalog check`): validate a bundled catalog from its YAML, not its prepared copy."""
    path = resolve_catalog_path(name_or_path)
    try:
        raw = read_catalog_file(path)
    except _NoSuchFile as exc:
        hint = f" (bundled: {', '.join(BUNDLED)})" if "/" not in name_or_path else ""
        raise CatalogError(f"{exc}{hint}") from None
    sha256 = hashlib.sha256(raw).hexdigest()
    if compiled and name_or_path.strip() in BUNDLED:
        return LoadedCatalog(_bundled_catalog(raw, str(path)), path, sha256)
    return LoadedCatalog(parse_catalog_bytes(raw, str(path)), path, sha256)


def _copy_source(raw: bytes) -> bytes:
    """What a bundled catalog's prepared copy is made from: its YAML and the code that validated it."""
    here = Path(__file__).resolve().parent
    return raw + (here / "schema.py").read_bytes() + (here / "validation.py").read_bytes()


def _bundled_catalog(raw: bytes, source: str) -> Catalog:
    """A bundled catalog from its prepared copy (validated by `make install`, so `cardfit ask` never imports
    pydantic: 150 ms over `python -c pass` at most), else strictly from its YAML."""
    data = bundled_yaml.read_copy(_copy_source(raw))
    return parse_catalog_bytes(raw, source) if data is None else schema.catalog_from_plain(data)


def prepare_bundled_catalogs() -> list[Path]:
    """Validate each bundled catalog from its YAML and keep its plain data as the prepared copy (make install)."""
    written = []
    for name in BUNDLED:
        raw = (DATA_DIR / f"{name}.yaml").read_bytes()
        catalog = parse_catalog_bytes(raw, str(DATA_DIR / f"{name}.yaml"))
        written.append(bundled_yaml.write_copy(_copy_source(raw), schema.catalog_to_plain(catalog)))
    return written


def _describe(source: str, data: dict[str, Any], exc: ValidationError) -> str:
    """First error, as `file: card <id> (cards[3]), field vram_gb: message` (+ how many more)."""
    errors = exc.errors()
    first = errors[0]
    loc = list(first.get("loc", ()))
    where = ""
    if len(loc) >= 2 and loc[0] == "cards" and isinstance(loc[1], int):
        index = loc[1]
        cards = data.get("cards")
        card = cards[index] if isinstance(cards, list) and index < len(cards) else None
        card_id = card.get("id") if isinstance(card, dict) else None
        label = f"card {card_id!r}" if card_id else "card"
        field = ".".join(str(part) for part in loc[2:]) or "(whole card)"
        where = f"{label} (cards[{index}]), field {field}"
    elif loc:
        where = "field " + ".".join(str(part) for part in loc)
    else:
        where = "catalog"
    message = first.get("msg", "invalid").removeprefix("Value error, ")
    if first.get("type") == "unexpected_keyword_argument":  # a dataclass's word for an unknown field
        message = "Extra inputs are not permitted"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{source}: {where}: {message}{more}"
