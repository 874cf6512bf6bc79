"""Any Hugging Face model: an org/name the registry does not know, looked up on the Hub and cached.

huggingface_hub does the HTTP (config.json; `get_safetensors_metadata` reads the safetensors headers with Range
requests, through model.safetensors.index.json for sharded repos) in a worker thread, so the event loop never
waits on the network; the whole lookup is bounded by `timeout_s`. What the Hub said is kept in the store
(bot/store/hub_models.py) so replicas and later questions ask once; a timeout or a dead network is not kept.
HF_ENDPOINT (a mirror) and HF_HUB_OFFLINE are read at each lookup, as huggingface_hub names them.
"""
from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import TypeAdapter

from bot import metrics
from bot.store import DATABASE_ERRORS
from bot.store.hub_models import HubEntry, HubModelRepository, hub_ttl_s
from engine.models.hub import HubShape, shape_from_hub
from engine.notes import Note
from engine.parse import NOT_A_QUESTION, ParseResult, Vocabulary, parse
from engine.sizing.rule import SizeRequest

log = logging.getLogger(__name__)

HubStatus = Literal["found", "gated", "missing", "unreadable", "offline", "disabled"]
# The Hub's repository ids: an owner and a name of letters, digits, "-", "_", "." (huggingface_hub's
# validate_repo_id allows at most 96 characters).
REPO_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}")
KEPT_IN_MEMORY = 1_024  # Hub answers held in memory (each a config of a few KB)
_TRUE = {"1", "on", "yes", "true"}


@dataclass(frozen=True, slots=True)
class HubResult:
    status: HubStatus
    repo_id: str
    hub: HubShape | None = None  # when found


def hub_offline() -> bool:
    """HF_HUB_OFFLINE, as huggingface_hub reads it (also for `cardfit models draft`)."""
    return _offline()


def hub_endpoint() -> str:
    """The Hub's address: HF_ENDPOINT (a mirror) or huggingface.co (also for `cardfit models draft`)."""
    return _endpoint()


def _offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE) or os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE


def _endpoint() -> str:
    from huggingface_hub import constants

    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def _fetch(repo_id: str, endpoint: str, timeout_s: float) -> HubEntry:
    """config.json and the parameters per dtype of one repository (blocking; runs in a worker thread; huggingface_hub
    is imported here, on the first lookup, not at every start of the bot and CLI).
    Raises for what is not the repository's answer (network, timeout, 5xx): that is not cached."""
    from huggingface_hub import HfApi, get_session, hf_hub_url, hf_raise_for_status
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        NotASafetensorsRepoError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
        SafetensorsParsingError,
    )
    from huggingface_hub.utils import build_hf_headers, disable_progress_bars  # type: ignore[attr-defined]

    disable_progress_bars()  # a sharded repo's headers are read with a tqdm bar on stderr otherwise
    try:
        response = get_session().get(hf_hub_url(repo_id, "config.json", endpoint=endpoint),
                                     headers=build_hf_headers(), timeout=timeout_s, follow_redirects=True)
        hf_raise_for_status(response)
        config: Any = response.json()
        if not isinstance(config, dict):
            return HubEntry(repo_id, "unreadable", None, None)
        metadata = HfApi(endpoint=endpoint).get_safetensors_metadata(repo_id, timeout=timeout_s)
    except GatedRepoError:  # a RepositoryNotFoundError too: first
        return HubEntry(repo_id, "gated", None, None)
    except (RepositoryNotFoundError, RevisionNotFoundError, EntryNotFoundError):
        return HubEntry(repo_id, "missing", None, None)
    except (NotASafetensorsRepoError, SafetensorsParsingError):  # no weights whose size can be read
        return HubEntry(repo_id, "unreadable", None, None)
    except HfHubHTTPError as error:
        status = error.response.status_code if error.response is not None else None
        if status in (401, 403):
            return HubEntry(repo_id, "gated", None, None)
        raise
    except ValueError:  # config.json that is no JSON
        return HubEntry(repo_id, "unreadable", None, None)
    counts = {str(dtype): int(count) for dtype, count in metadata.parameter_count.items()}
    return HubEntry(repo_id, "found", config, counts)


def _result(entry: HubEntry) -> HubResult:
    if entry.status in ("gated", "missing"):
        return HubResult("gated" if entry.status == "gated" else "missing", entry.repo_id)
    if entry.status != "found" or entry.config is None or entry.counts is None:
        return HubResult("unreadable", entry.repo_id)
    try:
        return HubResult("found", entry.repo_id, shape_from_hub(entry.repo_id, entry.config, entry.counts))
    except (ValueError, TypeError, ArithmeticError):  # a config the engine cannot size (no parameters, odd values)
        return HubResult("unreadable", entry.repo_id)


class HubLookup:
    """`await lookup(repo_id)`: the Hub's answer, from the store when it has a fresh one."""

    def __init__(self, store: HubModelRepository | None, *, enabled: bool = True, timeout_s: float = 5.0) -> None:
        self.store = store
        self.enabled = enabled
        self.timeout_s = timeout_s
        self._in_flight: dict[str, asyncio.Future[HubResult]] = {}  # one fetch per repo at a time
        # What this process was told, with when it expires: without a store (the CLI), or while the store cannot
        # take it (bounded: the oldest go first).
        self._kept: dict[str, tuple[HubEntry, float]] = {}

    @classmethod
    def from_env(cls, store: HubModelRepository | None = None) -> HubLookup:
        """For the CLI, which runs without the bot's settings: CARDFIT_HF_LOOKUP and CARDFIT_HF_TIMEOUT_S as
        bot/config.py reads them (pydantic's bool: 0/1, true/false, on/off, yes/no)."""
        enabled = TypeAdapter(bool).validate_python(os.environ.get("CARDFIT_HF_LOOKUP", "1").strip() or "1")
        timeout = TypeAdapter(float).validate_python(os.environ.get("CARDFIT_HF_TIMEOUT_S", "5").strip() or "5")
        return cls(store, enabled=enabled, timeout_s=timeout if 0 < timeout <= 60 else 5.0)

    def lookup_sync(self, repo_id: str) -> HubResult:
        """`lookup` from synchronous code (the CLI), on a loop of its own."""
        return asyncio.run(self.lookup(repo_id))

    async def lookup(self, repo_id: str) -> HubResult:
        if not self.enabled:
            return HubResult("disabled", repo_id)
        if REPO_ID_RE.fullmatch(repo_id) is None or ".." in repo_id:
            return HubResult("missing", repo_id)
        kept = await self._kept_entry(repo_id)
        if kept is not None:
            metrics.HUB_LOOKUPS.labels("hit").inc()
            return _result(kept)
        if _offline():
            return HubResult("offline", repo_id)
        pending = self._in_flight.get(repo_id)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[HubResult] = asyncio.get_running_loop().create_future()
        self._in_flight[repo_id] = future
        try:
            result = await self._ask_hub(repo_id)
            future.set_result(result)
            return result
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # retrieved: a lookup nobody else waited on must not warn at exit
            raise
        finally:
            del self._in_flight[repo_id]

    async def _ask_hub(self, repo_id: str) -> HubResult:
        try:
            entry = await asyncio.wait_for(asyncio.to_thread(_fetch, repo_id, _endpoint(), self.timeout_s),
                                           self.timeout_s)
        except Exception as error:  # timeout, no network, a 5xx: the Hub did not answer; ask again next time
            log.info("Hugging Face Hub lookup of %s failed: %s", repo_id, type(error).__name__)
            metrics.HUB_LOOKUPS.labels("timeout" if isinstance(error, TimeoutError) else "error").inc()
            return HubResult("offline", repo_id)
        await self._keep(entry)
        metrics.HUB_LOOKUPS.labels("miss").inc()
        return _result(entry)

    async def _kept_entry(self, repo_id: str) -> HubEntry | None:
        """The kept answer: the store's, or this process's where the store has none or cannot be read (a store
        that is down or busy must not fail a question the Hub can answer: it is asked again)."""
        if self.store is not None:
            try:
                kept = await self.store.hub_entry(repo_id)
            except DATABASE_ERRORS as error:
                log.warning("could not read the kept Hub answer for %s (%s); asking the Hub", repo_id,
                            type(error).__name__)
            else:
                if kept is not None:
                    return kept
        held = self._kept.get(repo_id)
        if held is None:
            return None
        if held[1] <= time.time():
            del self._kept[repo_id]
            return None
        return held[0]

    async def _keep(self, entry: HubEntry) -> None:
        """Keep the Hub's answer in the store; where the store cannot take it, in this process until the store
        can (the answer is given either way: the store is a cache here, not a record)."""
        if self.store is not None:
            try:
                await self.store.keep_hub_entry(entry)
            except DATABASE_ERRORS as error:
                log.warning("could not keep the Hub answer for %s (%s); kept in memory", entry.repo_id,
                            type(error).__name__)
            else:
                self._kept.pop(entry.repo_id, None)
                return
        self._kept.pop(entry.repo_id, None)
        if len(self._kept) >= KEPT_IN_MEMORY:
            del self._kept[next(iter(self._kept))]
        self._kept[entry.repo_id] = (entry, time.time() + hub_ttl_s(entry.status))


def hub_note(hub: HubResult) -> Note | None:
    """What the answer says about the lookup (bot/texts/locales note.hub_*); None when there was none (disabled)."""
    repo = hub.repo_id
    if hub.status == "found" and hub.hub is not None:
        shape = hub.hub.shape
        if shape.kind == "vlm":  # a config with a vision_config: the answer checks it as a vision model
            return Note(f"looked up on the Hugging Face Hub: {repo} ({shape.params_b:.3g}B params with its vision "
                        f"tower, {hub.hub.format}): a vision model", "hub_found_vlm", repo=repo,
                        params=round(shape.params_b, 3), format=hub.hub.format)
        return Note(f"looked up on the Hugging Face Hub: {repo} ({shape.params_b:.3g}B params, {hub.hub.format})",
                    "hub_found", repo=repo, params=round(shape.params_b, 3), format=hub.hub.format)
    if hub.status == "disabled":
        return None
    return Note(f"{hub_status(hub)}; sized from the size in its name", f"hub_{hub.status}", repo=repo)


def hub_status(hub: HubResult) -> str:
    """Why the Hub gave no shape, in English: "acme/x is gated on the Hugging Face Hub (it needs a sign-in)"."""
    return _STATUS_WORDS.get(hub.status, "{repo}: {status}").format(repo=hub.repo_id, status=hub.status)


_STATUS_WORDS = {
    "gated": "{repo} is gated on the Hugging Face Hub (it needs a sign-in)",
    "missing": "{repo} is not on the Hugging Face Hub",
    "unreadable": "{repo} on the Hugging Face Hub has no config.json and safetensors weights I can read",
    "offline": "the Hugging Face Hub did not answer for {repo}",
}


def hub_question(text: str, result: ParseResult, hub: HubResult, vocabulary: Vocabulary) -> ParseResult:
    """The question with the looked-up model in it: the rest of the text read again without the repository id
    (a size or "135M" in the name is the model's, not the question's), sized as that model; when the Hub had
    nothing, the parse as it was (the size in the name, when it has one) with a note saying why."""
    note = hub_note(hub)
    if note is None or hub.status != "found" or hub.hub is None:
        if note is not None and result.request is not None:
            result.request.assumed.insert(0, note)
            # the note names the repository: its words are no longer "not understood"
            words = set(re.split(r"[/_.\-]+", hub.repo_id.lower()))
            result.request.ignored = [entry for entry in result.request.ignored if entry not in words]
        return result
    start = text.find(hub.repo_id)
    rest = parse(text[:start] + " " + text[start + len(hub.repo_id):], vocabulary) if start >= 0 else result
    if rest.request is None and rest.error != NOT_A_QUESTION:
        return replace(result, request=None, error=rest.error)  # "batch 0" is still nonsense
    base = rest.request or rest.partial or SizeRequest()
    ignored = [*base.ignored, *([base.model] if base.model else [])]  # one model per question: the one typed first
    request = replace(base, model=hub.repo_id, params_b=None, assumed=[note, *base.assumed], ignored=ignored)
    return replace(result, request=request, error=None, matched_model=hub.repo_id, partial=request)
