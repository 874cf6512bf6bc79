"""A Hugging Face repo id in a question, read as a whole: the model it names and the published checkpoint it is.

"Qwen/Qwen2.5-72B-Instruct-AWQ" is the AWQ checkpoint of Qwen2.5 72B: the request names the model, the format
(AWQ, INT4) and the repo, so the answer sizes that checkpoint and its launch command names it. A repo id is never
read by a prefix of its name: "deepseek-ai/DeepSeek-R1-0528-Qwen3-8B" is the 8B distill (or, in a registry without
it, a model nobody knows), never DeepSeek-R1-0528. `cardfit size --model REPO` reads its repo here too, so a question
and the command line agree (engine.models.registry.Registry.named_repo says what a repo id names).
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.formats.precision import canonical_precision
from engine.formats.quant import checkpoint_format, quant_name
from engine.models.registry import GGUF_REPO, ModelShape, Registry
from engine.parse.hub import REPO_ID_RE
from engine.parse.scan import Scan


@dataclass(frozen=True, slots=True)
class RepoReading:
    """What a repo id names: its model, and for a quantized checkpoint its repo and format."""

    model: ModelShape
    checkpoint: str | None = None  # the quantized repo ("Qwen/Qwen2.5-72B-Instruct-AWQ"); None: the model's own
    quant: str | None = None  # its format's canonical name ("awq", "fp8_dynamic"); None for a GGUF repo
    precision: str | None = None  # the seed precision the format also is ("int4" for AWQ), else None
    gguf: bool = False  # a GGUF repo: the question names its type (else the usual Q4_K_M: engine.parse.runtime)


def read_repo(repo_id: str, registry: Registry) -> RepoReading | None:
    """The model and checkpoint a whole repo id names; None when the registry knows neither."""
    named = registry.named_repo(repo_id)
    if named is None:
        return None
    model, repo = named
    if repo is None:
        return RepoReading(model)
    if repo.quant == GGUF_REPO:
        return RepoReading(model, repo.repo, gguf=True)
    fmt = checkpoint_format(repo.quant)
    if fmt is None:  # a registry quant name no format row reads: the model, sized as the question says
        return RepoReading(model)
    precision = canonical_precision(fmt.name)
    return RepoReading(model, repo.hf_id, quant_name(fmt), precision, fmt.is_gguf)


@dataclass(frozen=True, slots=True)
class RepoSpan:
    """A repo id typed in the text: its tokens (the owner's, then the name's) and what it names."""

    start: int  # first token (the owner's)
    name_start: int  # first token of the name, after the "/"
    stop: int  # the token after it
    repo: str
    reading: RepoReading | None


def repo_spans(scan: Scan, registry: Registry) -> list[RepoSpan]:
    """Every repo id typed in the text, with what the registry says it names."""
    spans: list[RepoSpan] = []
    starts, ends = scan.tokens.start, scan.tokens.end
    for match in REPO_ID_RE.finditer(scan.text):
        repo = match.group("repo").rstrip(".-")
        first, last = match.start("repo"), match.start("repo") + len(repo)
        slash = first + repo.index("/")
        inside = [i for i in range(scan.n) if first <= starts[i] and ends[i] <= last]
        name = [i for i in inside if starts[i] > slash]
        if not inside or not name or inside != list(range(inside[0], inside[-1] + 1)):
            continue
        spans.append(RepoSpan(inside[0], name[0], inside[-1] + 1, repo, read_repo(repo, registry)))
    return spans
