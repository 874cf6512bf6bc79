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
