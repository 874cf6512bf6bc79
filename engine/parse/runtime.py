"""What a question says about how the model is run, beside its fields: the weight format a runtime implies when
the question names none (Ollama -- its word or a 'name:size' tag -- and a bare 'GGUF' mean the Q4_K_M file, said in
a note; a named precision or format, 'q8_0', 'fp16', 'awq', always wins), and 'YaRN' / 'rope scaling': the user
extends the model's window (SizeRequest.rope_scaling), so a context beyond it is what they mean to run.

Sources: Ollama's library tags without a quantization suffix ('llama3.1:70b', 'deepseek-r1:14b', ':latest')
point at Q4_K_M ("The default is now q4_k_m", jmorganca, github.com/ollama/ollama/issues/1543, 2024-12-29; the
library had used Q4_0 before, issues #2495 and #4626). For a GGUF with no type named, Q4_K_M is the file the big
uploaders call the default (bartowski's READMEs: "default size for most use cases"), so a renter who says "gguf" gets
the file they would most likely download: the GGUF that the shorthand "4-bit" names (engine/formats/formats.yaml,
plain_4bit), at the seed precision of a 4-bit width.
"""
from __future__ import annotations

import re

from engine.formats.precision import precision_words
from engine.formats.table import canonical_format
from engine.notes import Note
from engine.parse.draft import Draft
from engine.parse.scan import Scan

_DEFAULT = canonical_format("4-bit", "llama.cpp")
assert _DEFAULT is not None, "formats.yaml names no GGUF for the shorthand 4-bit"
DEFAULT_QUANT = _DEFAULT.name  # q4_k_m
DEFAULT_LABEL = _DEFAULT.label
DEFAULT_PRECISION = precision_words().widths[4]  # int4
# An Ollama tag: 'llama3.1:70b', 'deepseek-r1:14b', 'qwen3:30b-a3b', 'gemma3n:e4b', 'llama3.1:latest' (a quant suffix
# after it, '-instruct-q8_0', is read by the precision pass and wins); not a repo's 'file' ('repo-GGUF:UD-Q2_K_XL')
_OLLAMA_TAG_RE = re.compile(r"(?<![\w/:])([a-z][a-z0-9._-]*):(?:e?[0-9]+(?:\.[0-9]+)?[bm]|latest)(?![\w.])",
                            re.IGNORECASE)
# Words that take a value after a colon ('model:70b', 'size:7b') and so are no Ollama model name
_FIELD_NAMES = frozenset({"model", "modell", "size", "params", "parameters", "parameter", "groesse", "größe"})


# 'yarn', 'rope scaling', 'rope-scaling', 'rope_scaling', 'RoPE-Skalierung', 'mit YaRN'
_YARN_WORDS = frozenset({"yarn", "rope_scaling", "ropescaling"})
_ROPE_NEXT = frozenset({"scaling", "skalierung", "scale", "extension", "erweiterung"})


def read_rope_scaling(scan: Scan, draft: Draft) -> None:
    """'with yarn', 'rope scaling': the user extends the window (a note says it was read)."""
    words = scan.words
    if _YARN_WORDS.isdisjoint(words) and "rope" not in words:
        return
    for i, token in enumerate(scan.low):
        if not scan.free(i):
            continue
        length = 1 if token in _YARN_WORDS else 2 if token == "rope" and scan.next_free(i + 1) in _ROPE_NEXT else 0
        if length:
            scan.use(i, length)
            if draft.rope_scaling is None:
                draft.rope_scaling = "yarn"
                draft.assumed.append(Note("YaRN read: the model's window extended by RoPE scaling, as you said",
                                          "rope_scaling", written=scan.span(i, i + length - 1)))


def ollama_tag(text: str) -> bool:
    """Whether the text names a model the way Ollama tags it ('llama3.1:70b')."""
    if ":" not in text:
        return False
    return any(match.group(1).lower() not in _FIELD_NAMES for match in _OLLAMA_TAG_RE.finditer(text))


# A bare width under a llama.cpp-family engine ("q4 with llama.cpp", "8-bit in LM Studio") is the GGUF its
# shorthand names (engine/formats/formats.yaml shorthands: 4-bit -> Q4_K_M, 8-bit -> Q8_0)
_GGUF_OF_WIDTH = {DEFAULT_PRECISION: _DEFAULT}
_EIGHT = canonical_format("8-bit", "llama.cpp")
if _EIGHT is not None:
    _GGUF_OF_WIDTH[precision_words().widths[8]] = _EIGHT
_BITS = {precision: f"{bits}-bit" for bits, precision in precision_words().widths.items()}
_GGUF_ENGINES = frozenset({"llama.cpp", "LM Studio", "KoboldCpp"})  # engine.parse.launch names (Ollama: its own)


def assume_runtime_format(scan: Scan, draft: Draft) -> None:
    """Q4_K_M for an Ollama, llama.cpp or bare GGUF question that named no precision or format, inference only;
    a bare width under a llama.cpp-family engine is its GGUF ("q4 with llama.cpp": Q4_K_M)."""
    if draft.quant is not None or draft.workload not in (None, "inference"):
        return
    if draft.model is not None and "4" in (draft.model.published_format or ""):
        return  # a native 4-bit release (gpt-oss MXFP4, Kimi K2 Thinking INT4) keeps its own weights
    named = draft.engine_word in _GGUF_ENGINES or (draft.engine_word == "Ollama" and draft.precision is not None)
    if named and draft.launch_engine in (None, "llama.cpp"):
        gguf = _GGUF_OF_WIDTH.get(draft.precision) if draft.precision is not None else _DEFAULT
        if gguf is not None:
            width = draft.precision
            draft.precision = None
            draft.set_format(width or DEFAULT_PRECISION, gguf.name, gguf.label, Note(
                f"{gguf.label} ({draft.engine_word} runs GGUF files: "
                + (f"{gguf.label} is the usual download; say 'q8_0' or 'q5_k_m' for another)" if width is None
                   else f"a bare {_BITS[width]} is its {gguf.label} file)"),
                "runtime_format_engine" if width is None else "runtime_width_engine",
                format=gguf.label, engine=draft.engine_word, width=_BITS.get(width or "", "")))
        return
    if draft.precision is not None:
        return
    words = scan.words
    if "ollama" in words or ollama_tag(scan.text):
        why = "ollama"
    elif "gguf" in words:
        why = "gguf"
    else:
        return
    draft.set_format(DEFAULT_PRECISION, DEFAULT_QUANT, DEFAULT_LABEL, runtime_note(why))


def runtime_note(why: str) -> Note:
    if why == "ollama":
        return Note(f"{DEFAULT_LABEL} (Ollama's default: its tags without a quantization, e.g. llama3.1:70b, are "
                    f"{DEFAULT_LABEL} files; say 'q8_0' or 'fp16' for another)", "runtime_format_ollama",
                    format=DEFAULT_LABEL)
    return Note(f"{DEFAULT_LABEL} (GGUF with no type named: {DEFAULT_LABEL} is the usual download; say 'q8_0' or "
                "'q5_k_m' for another)", "runtime_format_gguf", format=DEFAULT_LABEL)
