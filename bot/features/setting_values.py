"""The text form of /set KEY VALUE: for each key the preference it sets, its parser, and the hint a bad value gets."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from catalog.schema import Catalog
from engine.formats.precision import canonical_kv_precision, canonical_precision
from engine.serving.constants import VLLM_OLDEST, VLLM_VERSION
from engine.serving.vllm import settings_for_version
from engine.sizing.rule import KV_PRECISION_BYTES, PRECISION_BYTES
from engine.sizing.sequence import MAX_BATCH, MAX_CONTEXT_TOKENS


def _parse_precision(raw: str, catalog: Catalog) -> str | None:
    value = canonical_precision(raw)
    return value if value in PRECISION_BYTES else None


def _parse_kv(raw: str, catalog: Catalog) -> str | None:
    value = canonical_kv_precision(raw)
    return value if value in KV_PRECISION_BYTES else None


def _parse_int(limit: int) -> Callable[[str, Catalog], int | None]:
    def parse_value(raw: str, catalog: Catalog) -> int | None:
        text = raw.lower().replace(",", "").replace(".", "").replace("_", "").replace(" ", "")
        multiplier = 1
        if text.endswith("k"):
            text, multiplier = text[:-1], 1024
        if not (text.isascii() and text.isdigit()):
            return None
        value = int(text) * multiplier
        return value if 0 < value <= limit else None
    return parse_value


def _parse_coin(raw: str, catalog: Catalog) -> str | None:
    coin = raw.strip().upper()
    return coin if coin in catalog.coins else None


def _parse_billing(raw: str, catalog: Catalog) -> str | None:
    words = {"hour": "hour", "hourly": "hour", "stunde": "hour", "day": "day", "tag": "day", "week": "week",
             "weekly": "week", "woche": "week", "month": "month", "monthly": "month", "monat": "month"}
    return words.get(raw.strip().lower())


def _parse_region(raw: str, catalog: Catalog) -> str | None:
    wanted = raw.strip().lower()
    for region in catalog.regions:
        if wanted in (region.id.lower(), region.name.lower()):
            return region.id
    return None


def _parse_lang(raw: str, catalog: Catalog) -> str | None:
    lang = raw.strip().lower()
    return lang if lang in ("en", "de") else None


def _parse_engine(raw: str, catalog: Catalog) -> str | None:
    words = {"vllm": "vllm", "llama.cpp": "llama.cpp", "llamacpp": "llama.cpp", "llama-cpp": "llama.cpp",
             "llama": "llama.cpp", "llama-server": "llama.cpp"}
    return words.get(raw.strip().lower())


def _parse_vllm(raw: str, catalog: Catalog) -> str | None:
    """A vLLM release the serving check knows (`cardfit ask --vllm-version` accepts the same), as X.Y.Z."""
    try:
        return settings_for_version(raw.strip()).version if raw.strip().lower() != "latest" else None
    except ValueError:
        return None


def _vllm_hint_values(catalog: Catalog) -> dict[str, object]:
    return {"oldest": VLLM_OLDEST.removesuffix(".0"), "newest": VLLM_VERSION.removesuffix(".0")}


def _no_hint_values(catalog: Catalog) -> dict[str, object]:
    return {}


@dataclass(frozen=True, slots=True)
class SettingSpec:
    field: str  # the preference it sets
    parse: Callable[[str, Catalog], str | int | None]
    hint_key: str  # what a bad value is answered with
    hint_values: Callable[[Catalog], dict[str, object]] = _no_hint_values
    resets: tuple[str, ...] = ()  # words that clear this key besides settings.RESET_WORDS


SETTINGS = {
    "lang": SettingSpec("language", _parse_lang, "hint.lang"),
    "precision": SettingSpec("precision", _parse_precision, "hint.precision"),
    "kv": SettingSpec("kv_precision", _parse_kv, "hint.kv"),
    "context": SettingSpec("context_tokens", _parse_int(MAX_CONTEXT_TOKENS), "hint.context"),
    "batch": SettingSpec("batch", _parse_int(MAX_BATCH), "hint.batch", lambda c: {"max": MAX_BATCH}),
    "coin": SettingSpec("coin", _parse_coin, "hint.coin", lambda c: {"coins": ", ".join(c.coins)}),
    "billing": SettingSpec("billing", _parse_billing, "hint.billing"),
    "region": SettingSpec("region", _parse_region, "hint.region",
                          lambda c: {"regions": ", ".join(r.id for r in c.regions) or "-"}),
    "engine": SettingSpec("engine", _parse_engine, "hint.engine"),
    "vllm": SettingSpec("vllm", _parse_vllm, "hint.vllm", _vllm_hint_values, resets=("latest", "newest")),
}
