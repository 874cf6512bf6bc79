"""A pasted launch line: `vllm serve <repo> ...`, `python -m vllm.entrypoints.openai.api_server --model <repo>`,
`llama-server -m model.gguf ...` (also `./llama-server`, `llama-cli`, `build/bin/llama-server`) is a question about
that launch: the engine it names runs the serving check (`ParseResult.launch_engine`), and the launcher's own words
are read, never listed as "not understood" ('llama' of llama-server is no model name). The flags are
engine.parse.flags's; the model is the repo id or GGUF file name, read by the model pass.

Run before the model pass, so the launcher's words are used first."""
from __future__ import annotations

import re

from engine.notes import Note
from engine.parse.draft import Draft
from engine.parse.scan import Scan

# The launchers, as their documentation writes them (vLLM: "vllm serve", the OpenAI server module; llama.cpp's
# tools: llama-server, llama-cli, llama-run), with a path before them ('./', 'build/bin/')
_LAUNCH_RE = re.compile(
    r"(?:(?<![\w.-])(?:python3?\s+-m\s+)?vllm(?:\.entrypoints\.openai\.api_server|\s+serve)\b)"
    r"|(?:(?<![\w-])(?:[\w./-]*/)?llama-(?:server|cli|run)\b)", re.IGNORECASE)

_ENV_RE = re.compile(r"(?<![\w-])[A-Z][A-Z0-9_]*=[^\s]+")


def read_launch(scan: Scan, draft: Draft) -> None:
    """Which engine a pasted launch line names; its words used."""
    if "vllm" not in scan.words and "llama" not in scan.words:
        return
    match = _LAUNCH_RE.search(scan.text)
    if match is None:
        return
    draft.launch_engine = "vllm" if "vllm" in match.group(0).lower() else "llama.cpp"
    tokens = scan.tokens
    for i in range(scan.n):
        if tokens.start[i] >= match.start() and tokens.end[i] <= match.end():
            scan.used[i] = True
    # "CUDA_VISIBLE_DEVICES=0,1 vllm serve ...": an environment setting before the launcher, listed whole
    for setting in _ENV_RE.finditer(scan.text, 0, match.start()):
        inside = [i for i in range(scan.n) if tokens.start[i] >= setting.start() and tokens.end[i] <= setting.end()]
        if inside and not any(scan.used[i] for i in inside):
            for i in inside:
                scan.used[i] = True
            draft.ignored.append(setting.group(0))


_ENGINE_NAMES = {"vllm": "vLLM", "llama.cpp": "llama.cpp"}

# Engines named in plain words ("with llama.cpp", "mit vLLM", "in LM Studio"), as token runs -> (the engine whose
# check runs, the name shown). LM Studio and KoboldCpp run GGUF files on llama.cpp ("LM Studio is built on
# llama.cpp", huggingface.co/docs/hub/lmstudio; KoboldCpp "builds off llama.cpp", LostRuins/koboldcpp README), and
# Ollama runs GGUF files on llama.cpp's ggml: their memory is llama.cpp's. SGLang, TensorRT-LLM and TGI serve the
# safetensors weights vLLM serves, with a paged KV cache and a memory share of their own that Cardfit has not
# modelled: vLLM's check stands in, said in a note (closer than no check: the same weights and a preallocated KV
# cache). ExLlamaV2 / TabbyAPI load EXL2, which neither checked engine loads: no check, said by the format's note.
_ENGINE_WORDS: dict[tuple[str, ...], tuple[str | None, str]] = {
    ("llama", "cpp"): ("llama.cpp", "llama.cpp"), ("llamacpp",): ("llama.cpp", "llama.cpp"),
    ("ollama",): ("llama.cpp", "Ollama"),
    ("lm", "studio"): ("llama.cpp", "LM Studio"), ("lmstudio",): ("llama.cpp", "LM Studio"),
    ("koboldcpp",): ("llama.cpp", "KoboldCpp"), ("kobold", "cpp"): ("llama.cpp", "KoboldCpp"),
    ("vllm",): ("vllm", "vLLM"),
    ("sglang",): ("vllm", "SGLang"), ("tensorrt", "llm"): ("vllm", "TensorRT-LLM"),
    ("trt", "llm"): ("vllm", "TensorRT-LLM"), ("tgi",): ("vllm", "TGI"),
    ("text", "generation", "inference"): ("vllm", "TGI"),
    ("tabbyapi",): (None, "TabbyAPI"),
}
_ENGINE_FIRST = frozenset(words[0] for words in _ENGINE_WORDS)
_CHECKED = frozenset({"vLLM", "llama.cpp"})
GGUF_FAMILY = frozenset({"llama.cpp", "Ollama", "LM Studio", "KoboldCpp"})


def read_engine_words(scan: Scan, draft: Draft) -> None:
    """An engine named in plain words: its check runs (the first one named; a second is listed as not honoured).
    Before the model pass, so the 'llama' of 'llama.cpp' is no model name."""
    if _ENGINE_FIRST.isdisjoint(scan.words):
        return
    low = scan.low
    for i in range(scan.n):
        if low[i] not in _ENGINE_FIRST or not scan.free(i):
            continue
        for words, (engine, name) in _ENGINE_WORDS.items():
            if tuple(low[i:i + len(words)]) == words and all(scan.free(j) for j in range(i, i + len(words))):
                scan.use(i, len(words))
                if draft.engine_word is None:
                    draft.engine_word, draft.engine = name, engine
                elif draft.engine_word != name:
                    draft.ignored.append(scan.span(i, i + len(words) - 1))
                break


def note_engine(draft: Draft) -> None:
    """After every pass: what the engine word did. A launch line's engine wins (its own note says it)."""
    name = draft.engine_word
    if name is None:
        return
    if draft.launch_engine is not None:
        if draft.engine not in (None, draft.launch_engine):
            draft.ignored.append(name)
        return
    if draft.workload not in (None, "inference"):
        draft.assumed.append(Note(f"{name}: an inference engine; a training job is sized without it",
                                  "engine_training", engine=name))
        draft.engine = None
        return
    if name == "Ollama":  # Ollama's note is its format's (engine.parse.runtime)
        return
    if name in _CHECKED:
        draft.assumed.append(Note(f"{name} named: its serving check runs", "engine_named", engine=name))
    elif name in GGUF_FAMILY:
        draft.assumed.append(Note(f"{name} runs GGUF files on llama.cpp: llama.cpp's serving check runs",
                                  "engine_gguf", engine=name))
    elif draft.engine is not None:
        draft.assumed.append(Note(f"{name} is not checked by Cardfit: vLLM's check stands in (the same weights; "
                                  f"{name} reserves its memory its own way)", "engine_unchecked", engine=name))


def note_launch(draft: Draft) -> None:
    """After every pass: a launch line says what of it was read -- its engine and the flags honoured -- so the
    reader sees each flag taken, beside the ones listed as not understood."""
    if draft.launch_engine is None:
        return
    engine = _ENGINE_NAMES[draft.launch_engine]
    flags = ", ".join(draft.honoured_flags)
    text = f"launch line read: {engine}" + (f" with {flags}" if flags else "")
    if flags:
        draft.assumed.insert(0, Note(text, "launch_read", engine=engine, flags=flags))
    else:
        draft.assumed.insert(0, Note(text, "launch_read_bare", engine=engine))
