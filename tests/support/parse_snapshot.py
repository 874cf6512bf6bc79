"""A parse result as one JSON line, and a deterministic set of varied texts to parse (the parser's equivalence tests).

tests/test_parser_equivalence.py compares the parser's results on these texts with the ones recorded from the
parser before its speed-up (d4df705): `python -m tests.support.parse_snapshot` writes
tests/data/parse_results.jsonl.gz again -- only for a deliberate change of what the parser reads. The fixture
keeps a digest of each result (`python -m tests.support.parse_snapshot --full PATH` writes the whole results, to
compare by hand).
"""
from __future__ import annotations

import gzip
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

import yaml

from catalog.loader import load_catalog
from engine.notes import Note
from engine.parse import ParseResult, Vocabulary, _parse_strict, default_vocabulary

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "data" / "parse_results.jsonl.gz"
SEED = 14
MUTATIONS_PER_TEXT = 6

# Pieces mixed into the texts: German and English words the passes read, units, numbers, cards, periods, coins.
_PIECES = (
    "wie viel VRAM für", "how much VRAM for", "auf einer H100", "on 2x A100", "with 32k context", "mit 8k Kontext",
    "pro Tag", "per hour", "in BTC", "mit ETH zahlen", "and", "und", "was ist mit", "what about", "for 8 users",
    "für 16 Nutzer", "batch 4", "bs8", "fp8", "int4", "4-bit", "q4_k_m", "kv cache fp8", "qlora", "fine-tune",
    "inference", "vs H200", "oder L40S", "cheapest", "günstigste", "how many users", "max context", "biggest model",
    "in Dallas", "DFW-1", "region iad-1", "my 4090", "RTX 3060 12GB", "24 GB", "48gb budget", "llama 3.1",
    "qwen 7b", "mistral large", "deepseek r1 distill qwen 7b", "Kimi K2", "meta-llama/Llama-3.1-8B", "8x7b",
    "seven billion", "sieben Milliarden", "zwei H100", "200k", "1M tokens", "32 000 tokens", "-4", "1e20",
    "10^20 B", "1,5B", "8.192 Token", "gpt-oss-20b", "70B - 4 bit", "a B200", "eine H200", "x4", "dual",
    "wieviel kostet", "price", "monthly", "im Monat", "/start", "🚀", "(80 GB)", "vLLM", "bf16", "nf4",
)
_NUMBERS = ("0", "1", "2", "3", "4", "7", "8", "13", "16", "32", "70", "405", "1.5", "0,5", "4090", "32768", "100000")
_UNITS = ("b", "B", " B", "bn", " billion", "k", "K", " k", "gb", " GB", "GiB", "t", "x", " tokens", " bit", "m")


def _mutate(text: str, rng: random.Random) -> str:
    words = text.split()
    kind = rng.randrange(12)
    if kind == 0:
        return text.upper()
    if kind == 1:
        return text.lower().replace("ä", "ae").replace("ü", "ue")
    if kind == 2:
        return rng.choice(("-", ",", "  ", ", ", "/", "_", ".", " - ")).join(words)
    if kind == 3:
        return f"{rng.choice(_PIECES)} {text}"
    if kind == 4:
        return f"{text} {rng.choice(_PIECES)}"
    if kind == 5 and len(words) > 1:
        i = rng.randrange(len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
        return " ".join(words)
    if kind == 6:
        return " ".join((*words, rng.choice(_NUMBERS) + rng.choice(_UNITS)))
    if kind == 7 and words:
        i = rng.randrange(len(words))
        words[i] = rng.choice(_NUMBERS) + rng.choice(_UNITS)
        return " ".join(words)
    if kind == 8:
        return "".join(ch if not ch.isdigit() else rng.choice("0123456789") for ch in text)
    if kind == 9 and words:
        i = rng.randrange(len(words))
        return " ".join((*words[:i], rng.choice(_PIECES), *words[i:]))
    if kind == 10:
        return text + rng.choice(("?", "!!!", "???", ".", " ?", ";", ")")) if rng.random() < 0.5 else f"({text})"
    return f"{rng.choice(_PIECES)} {rng.choice(_PIECES)} {text} {rng.choice(_PIECES)}"


def corpus_texts() -> list[str]:
    data = yaml.safe_load((ROOT / "tests" / "parser_corpus.yaml").read_text(encoding="utf-8"))
    return [case["text"] for case in data["cases"] if case.get("text")]


def varied_texts() -> list[str]:
    """The corpus texts, each with MUTATIONS_PER_TEXT mutations of itself (the same list on every run)."""
    rng = random.Random(SEED)
    texts: list[str] = []
    corpus = corpus_texts()
    for text in corpus:
        texts.append(text)
        for _ in range(MUTATIONS_PER_TEXT):
            texts.append(_mutate(text, rng))
    for _ in range(len(corpus)):  # two corpus texts in one message
        texts.append(f"{rng.choice(corpus)} {rng.choice(corpus)}")
    return texts


def vocabularies() -> dict[str, Vocabulary]:
    named = {"bundled": default_vocabulary()}
    for catalog in ("gpurenthub", "gpuwithcrypto"):
        named[catalog] = Vocabulary.of_catalog(load_catalog(catalog).catalog)
    return named


def _plain(value: Any) -> Any:
    if isinstance(value, Note):
        return {"note": str(value), "code": value.code, "values": _plain(value.values)}
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if hasattr(value, "__dataclass_fields__"):
        return {name: _plain(getattr(value, name)) for name in value.__dataclass_fields__}
    return value


def snapshot(result: ParseResult) -> str:
    """Every field of a result, notes with their codes and values, as one JSON text."""
    fields = _plain(result)
    fields["told_language"] = result.told_language
    return json.dumps(fields, ensure_ascii=False, sort_keys=True)


def parse_or_crash(text: str, vocabulary: Vocabulary) -> str:
    try:
        return snapshot(_parse_strict(text, vocabulary))
    except Exception as error:  # a crash is a result too: the new parser must crash alike (parse() hides it)
        return f"crash: {type(error).__name__}"


def results() -> list[list[str]]:
    rows = []
    for name, vocabulary in vocabularies().items():
        for text in varied_texts():
            rows.append([name, text, parse_or_crash(text, vocabulary)])
    return rows


def digest(snapshot_text: str) -> str:
    return hashlib.sha1(snapshot_text.encode("utf-8")).hexdigest()[:16]


def main() -> None:
    full = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--full" else None
    rows = results()
    with gzip.open(full or FIXTURE, "wt", encoding="utf-8") as handle:
        for name, text, result in rows:
            handle.write(json.dumps([name, text, result if full else digest(result)], ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
