"""Runtime flags pasted into a question, read as what they set (vLLM's and llama.cpp's own names):

- `--max-model-len 65536`, `-c 32768`, `--ctx-size 16384`: the context (`context_tokens`);
- `--tensor-parallel-size 2`, `-tp 2`: the GPU count, when the text names none (a different count named is kept
  and the flag listed as not honoured);
- `--kv-cache-dtype fp8` (also `fp8_e4m3`, `fp8_e5m2`), `-ctk q8_0` / `--cache-type-k q8_0`: the KV cache
  precision; `auto` is the default;
- `--max-num-seqs 16`: vLLM's requests at once, read as the batch (the users the answer sizes for);
- `--gpu-memory-utilization 0.85`: the share of each card vLLM takes (`gpu_memory_utilization`, the serving
  check's);
- `-ngl 99` (every layer on the GPU) is what Cardfit sizes; fewer layers offload the rest to the CPU, which it
  does not size: a note says so (sized with every layer on the GPU).

Any other `--flag value` is listed whole under "Not understood" (never in pieces), so nothing stated is dropped
silently."""
from __future__ import annotations

import re

from engine.notes import Note
from engine.parse.draft import Draft
from engine.parse.scan import Scan
from engine.sizing.rule import KV_PRECISION_BYTES

# "--max-model-len 65536", "--max-model-len=64k", "-c 32768"; a flag starts a word (not "gpt-oss")
_FLAG_RE = re.compile(r"(?<![\w-])(--?[a-z][a-z0-9_-]*)(?:[ \t]*=[ \t]*|[ \t]+)?([^\s-][^\s,;]*)?", re.IGNORECASE)
_CONTEXT = frozenset({"--max-model-len", "-c", "--ctx-size", "--context-size", "--max-seq-len"})
_TP = frozenset({"--tensor-parallel-size", "-tp"})
_KV = frozenset({"--kv-cache-dtype", "-ctk", "-ctv", "--cache-type-k", "--cache-type-v"})
_UTILIZATION = frozenset({"--gpu-memory-utilization"})
_LAYERS = frozenset({"-ngl", "--n-gpu-layers", "--gpu-layers"})
_SEQS = frozenset({"--max-num-seqs"})
_ALL_LAYERS = 99  # llama.cpp's usual "every layer" (-ngl 99, 999)
_KV_NAMES = {"fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "fp8_inc": "fp8", "q8_0": "int8", "f16": "fp16",
             "bf16": "bf16", "f32": "fp32"}
_KNOWN = _CONTEXT | _TP | _KV | _UTILIZATION | _LAYERS | _SEQS
_VALUE_RE = re.compile(r"[0-9][\w.:]*|auto|true|false", re.IGNORECASE)  # a value of a flag Cardfit does not know
_COUNT_RE = re.compile(r"[0-9]{1,8}k?")


def read_flags(scan: Scan, draft: Draft) -> None:
    """The runtime flags Cardfit knows, before the other passes (so '65536' is read once, as the context)."""
    if "-" not in scan.text:
        return
    for match in _FLAG_RE.finditer(scan.text):
        flag, value = match.group(1).lower(), (match.group(2) or "")
        if flag not in _KNOWN:
            continue
        end = match.end() if value else match.end(1)
        if not _use_span(scan, match.start(1), end):
            continue  # a name or a value another pass has read
        written = scan.text[match.start(1):end].strip()
        if _apply(draft, flag, value.lower(), written):
            draft.honoured_flags.append(written)
        else:
            draft.ignored.append(written)


def list_unknown_flags(scan: Scan, draft: Draft) -> None:
    """After every pass: a `--flag value` no pass read is listed whole under "Not understood" ('--enforce-eager'),
    not in pieces; one whose words a pass read ('--context 32768', '--precision int4') was understood."""
    if "--" not in scan.text:
        return
    for match in _FLAG_RE.finditer(scan.text):
        flag, value = match.group(1), (match.group(2) or "")
        if not flag.startswith("--") or flag.lower() in _KNOWN:
            continue
        if value and _read(scan, match.start(2), match.end(2)):
            continue  # "--precision int4": a pass read its value, so the flag was understood
        if not _VALUE_RE.fullmatch(value):
            value = ""  # "--enforce-eager qwen3": the word after a switch is no value of it
        if value:  # "--host 0.0.0.0": no pass read the value, so the flag is listed whole, whoever read its name
            _use_all(scan, match.start(1), match.end())
        elif not _use_span(scan, match.start(1), match.end(1)):
            continue  # a pass read its name: understood
        draft.ignored.append(scan.text[match.start(1):match.end() if value else match.end(1)].strip())


def _apply(draft: Draft, flag: str, value: str, written: str) -> bool:
    """Set what the flag says; False when it is not honoured (its text is then listed)."""
    if flag in _CONTEXT:
        if not _COUNT_RE.fullmatch(value):
            return False
        draft.set_context(int(value[:-1]) * 1024 if value.endswith("k") else int(value), value)
        return True
    if flag in _TP:
        if not value.isdigit():
            return False
        draft.flag_gpu_count = (int(value), written)
        return True
    if flag in _KV:
        if value == "auto":
            return True
        kv = _KV_NAMES.get(value, value)
        if kv not in KV_PRECISION_BYTES:
            return False
        draft.set_kv_precision(kv, written)
        return True
    if flag in _SEQS:
        if not value.isdigit() or not 0 < int(value) <= 100_000:
            return False
        draft.set_batch(int(value), written)
        return True
    if flag in _UTILIZATION:
        try:
            share = float(value)
        except ValueError:
            return False
        if not 0 < share <= 1:
            return False
        draft.gpu_memory_utilization = share
        return True
    if not value.isdigit():
        return False
    if int(value) < _ALL_LAYERS:  # -ngl 40: the rest on the CPU, which is not sized; said, never sized silently
        draft.assumed.append(Note(f"{written} keeps the other layers on the CPU, which Cardfit does not size: sized "
                                  "with every layer on the GPU", "ngl_partial", written=written))
    return True  # -ngl 99: every layer on the GPU is what is sized


def apply_flag_count(draft: Draft) -> None:
    """After the cards pass: `-tp 2` is the GPU count when the text named none; a different count is kept."""
    found = draft.flag_gpu_count
    if found is None:
        return
    count, written = found
    if draft.gpu_count is None:
        draft.set_gpu_count(count, written)
    elif draft.gpu_count != count:
        draft.ignored.append(written)
        draft.honoured_flags = [flag for flag in draft.honoured_flags if flag != written]


def _read(scan: Scan, first: int, last: int) -> bool:
    """Whether a pass has used a token inside characters first..last."""
    tokens = scan.tokens
    return any(scan.used[i] for i in range(scan.n) if tokens.start[i] >= first and tokens.end[i] <= last)


def _use_all(scan: Scan, first: int, last: int) -> None:
    """Use every token inside characters first..last."""
    tokens = scan.tokens
    for i in range(scan.n):
        if tokens.start[i] >= first and tokens.end[i] <= last:
            scan.used[i] = True


def _use_span(scan: Scan, first: int, last: int) -> bool:
    """Use the tokens inside characters first..last; False when one of them is already used."""
    tokens = scan.tokens
    inside = [i for i in range(scan.n) if tokens.start[i] >= first and tokens.end[i] <= last]
    if any(scan.used[i] for i in inside):
        return False
    for i in inside:
        scan.used[i] = True
    return True
