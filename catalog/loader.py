"""Loading a catalog (bundled name or YAML path) with one clear error naming the file, the card and the field."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from catalog.schema import Catalog

DATA_DIR = Path(__file__).resolve().parent / "data"
BUNDLED = ("gpurenthub", "gpuwithcrypto")


class CatalogError(ValueError):
    """A catalog that cannot be used; the message is meant for a human (operator or admin)."""


@dataclass(frozen=True)
class LoadedCatalog:
    catalog: Catalog
    path: Path
    sha256: str


def resolve_catalog_path(name_or_path: str) -> Path:
    """A bundled catalog name (`gpurenthub`) or a path to a YAML file."""
    candidate = name_or_path.strip()
    if candidate in BUNDLED:
        return DATA_DIR / f"{candidate}.yaml"
    return Path(candidate).expanduser()


def parse_catalog(text: str, source: str = "<string>") -> Catalog:
    """Validate YAML text as a catalog; raise CatalogError with file, card and field on failure."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CatalogError(f"{source}: not valid YAML{where}: {problem}") from None
    if not isinstance(data, dict):
        raise CatalogError(f"{source}: expected a mapping at the top level, found {type(data).__name__}")
    try:
        return Catalog.model_validate(data)
    except ValidationError as exc:
        raise CatalogError(_describe(source, data, exc)) from None


def load_catalog(name_or_path: str) -> LoadedCatalog:
    path = resolve_catalog_path(name_or_path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        hint = f" (bundled: {', '.join(BUNDLED)})" if "/" not in name_or_path else ""
        raise CatalogError(f"{path}: no such catalog file{hint}") from None
    except OSError as exc:
        raise CatalogError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CatalogError(f"{path}: not UTF-8 text") from None
    return LoadedCatalog(parse_catalog(text, str(path)), path, hashlib.sha256(raw).hexdigest())


def _describe(source: str, data: dict[str, Any], exc: ValidationError) -> str:
    """First error, as `file: card <id> (cards[3]), field vram_gb: message` (+ how many more)."""
    errors = exc.errors()
    first = errors[0]
    loc = list(first.get("loc", ()))
    where = ""
    if len(loc) >= 2 and loc[0] == "cards" and isinstance(loc[1], int):
        index = loc[1]
        cards = data.get("cards") or []
        card_id = cards[index].get("id") if index < len(cards) and isinstance(cards[index], dict) else None
        label = f"card {card_id!r}" if card_id else "card"
        field = ".".join(str(part) for part in loc[2:]) or "(whole card)"
        where = f"{label} (cards[{index}]), field {field}"
    elif loc:
        where = "field " + ".".join(str(part) for part in loc)
    else:
        where = "catalog"
    message = first.get("msg", "invalid").removeprefix("Value error, ")
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{source}: {where}: {message}{more}"
