"""Runtime flags pasted into a question, read as what they set (vLLM's and llama.cpp's own names):

- `--max-model-len 65536`, `-c 32768`, `--ctx-size 16384`: the context (`context_tokens`);
- `--tensor-parallel-size 2`, `-tp 2`: the GPU count, when the text names none (a different count named is kept
  and the flag listed as not honoured);
- `--kv-cache-dtype fp8` (also `fp8_e4m3`, `fp8_e5m2`), `-ctk q8_0` / `--cache-type-k q8_0`: the KV cache
  precision; `auto` is the default;
- `--max-num-seqs 16`: vLLM's requests at once, read as the batch (the users the answer sizes for);
- `--gpu-memory-utilization 0.85`: the share of each card vLLM takes (`gpu_memory_utilization`, the serving
  check's);
- `--parallel 4`, `-np 4` (llama-server's slots): 4 users; llama.cpp splits `-c` across the slots, so each user gets
  c / 4 tokens, said in a note (with `--kv-unified`, `-kvu`, the slots share the whole `-c`: sized the same, c in
  all, and the note says one user may take all of it);
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
_SLOTS = frozenset({"--parallel", "-np"})
_UNIFIED = frozenset({"--kv-unified", "-kvu"})  # switches: no value
_SLOT_CONTEXT = frozenset({"-c", "--ctx-size"})  # llama.cpp's names: the total the slots split
_ALL_LAYERS = 99  # llama.cpp's usual "every layer" (-ngl 99, 999)
_KV_NAMES = {"fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "fp8_inc": "fp8", "q8_0": "int8", "f16": "fp16",
             "bf16": "bf16", "f32": "fp32"}
_KNOWN = _CONTEXT | _TP | _KV | _UTILIZATION | _LAYERS | _SEQS | _SLOTS | _UNIFIED
# llama.cpp pads the context to 256 cells, splits it evenly over the slots and pads each slot's share again:
# `n_ctx = GGML_PAD(n_ctx, 256)`, then without kv_unified `n_ctx_seq = GGML_PAD(n_ctx / n_seq_max, 256)`; with it,
# `n_ctx_seq = n_ctx` (src/llama-context.cpp, llama_context::llama_context, ggml-org/llama.cpp 001d906a); the server
# passes `--parallel` as n_seq_max, and with no `--parallel` it takes 4 slots with kv_unified on (tools/server).
_PAD = 256
_VALUE_RE = re.compile(r"[0-9][\w.:]*|auto|true|false", re.IGNORECASE)  # a value of a flag Cardfit does not know
_COUNT_RE = re.compile(r"[0-9]{1,8}k?")


def read_flags(scan: Scan, draft: Draft) -> None:
    """The runtime flags Cardfit knows, before the other passes (so '65536' is read once, as the context)."""
    if "-" not in scan.text:
        return
    total: int | None = None  # the context a llama.cpp -c gave, before the slots split it
    slots: tuple[int, str] | None = None
    unified = False
    for match in _FLAG_RE.finditer(scan.text):
        flag, value = match.group(1).lower(), (match.group(2) or "")
        if flag not in _KNOWN:
            continue
        if flag in _UNIFIED:
            value = ""
        end = match.end() if value else match.end(1)
        if not _use_span(scan, match.start(1), end):
            continue  # a name or a value another pass has read
        written = scan.text[match.start(1):end].strip()
        if flag in _UNIFIED:
            unified = True
            draft.honoured_flags.append(written)
            continue
        if flag in _SLOTS:
            if value.isdigit() and 0 < int(value) <= 256 and slots is None:  # llama.cpp's LLAMA_MAX_SEQ: 256
                slots = (int(value), written)
                draft.honoured_flags.append(written)
            else:
                draft.ignored.append(written)
            continue
        before = draft.context_tokens
        if _apply(draft, flag, value.lower(), written):
            draft.honoured_flags.append(written)
            if flag in _SLOT_CONTEXT and before is None:
                total = draft.context_tokens
        else:
            draft.ignored.append(written)
    if slots is not None:
        _split_slots(draft, slots, total, unified)


def _pad(tokens: int) -> int:
    return -(-tokens // _PAD) * _PAD


def _split_slots(draft: Draft, slots: tuple[int, str], total: int | None, unified: bool) -> None:
    """`-np 4 -c 32768`: 4 users at llama.cpp's share of the context each (8,192), said in a note."""
    count, written = slots
    draft.set_batch(count, written)
    if total is None:  # no -c: llama.cpp splits the model's window; sized at the default context each, said
        draft.assumed.append(Note(f"{written}: {count} users; llama.cpp splits -c over them (no -c given: sized at "
                                  "the default context each)",
                                  "slots_split_bare", flag=written, slots=count))
        return
    if unified:
        draft.context_tokens = max(1, _pad(total) // count)
        draft.assumed.append(Note(
            f"{written} with a unified KV cache: the {count} slots share {total:,} tokens, one user may take all of "
            f"them; sized as {count} users at {draft.context_tokens:,} tokens each", "slots_unified",
            flag=written, slots=count, total=total, each=draft.context_tokens))
        return
    each = _pad(_pad(total) // count)
    draft.context_tokens = each
    draft.assumed.append(Note(
        f"{written}: llama.cpp splits -c {total:,} over {count} slots: each user gets {each:,} tokens",
        "slots_split", flag=written, slots=count, total=total, each=each))


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
