"""A pasted launch line: `vllm serve <repo> ...`, `python -m vllm.entrypoints.openai.api_server --model <repo>`,
`llama-server -m model.gguf ...` (also `./llama-server`, `llama-cli`, `build/bin/llama-server`) is a question about
that launch: the engine it names runs the serving check (`ParseResult.launch_engine`), and the launcher's own words
are read, never listed as "not understood" ('llama' of llama-server is no model name). The flags are
engine.parse.flags's; the model is the repo id or GGUF file name, read by the model pass.

Run before the model pass, so the launcher's words are used first."""
from __future__ import annotations

import re

from engine.parse.draft import Draft
from engine.parse.scan import Scan

# The launchers, as their documentation writes them (vLLM: "vllm serve", the OpenAI server module; llama.cpp's
# tools: llama-server, llama-cli, llama-run), with a path before them ('./', 'build/bin/')
_LAUNCH_RE = re.compile(
    r"(?:(?<![\w.-])(?:python3?\s+-m\s+)?vllm(?:\.entrypoints\.openai\.api_server|\s+serve)\b)"
    r"|(?:(?<![\w-])(?:[\w./-]*/)?llama-(?:server|cli|run)\b)", re.IGNORECASE)


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
