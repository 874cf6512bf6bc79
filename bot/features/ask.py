"""Answering a question, the one way every front end does it: parse -> Hub lookup -> follow-up -> preferences ->
answer.

The chat and /size (bot/features/questions.py), the buttons and deep links (bot/features/answers.py), inline and
/quote (bot/features/staff.py), /compare (bot/features/cards.py) and `cardfit ask` (bot/cli/main.py) all go
through `ask` or its answer step, `answer_for`. What differs between them is what they have, passed in, never a
second copy of the steps: the CLI has no store, so no earlier question to follow up, and no preferences; inline
and /quote answer at once and do not wait on the Hub.

Nothing here imports the store, asyncio or the Hub's client: `cardfit ask` runs this module on every start
(`ask` never waits on anything when its inputs do not, see bot/cli/main.py), and bot.features.hub_lookup is
imported only for a question that names a repository the registry does not know.
"""
from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from catalog.schema import Catalog
from engine.answer.build import Answer, build_answer
from engine.models.registry import Registry, default_registry
from engine.notes import Note
from engine.parse import ParseResult, Vocabulary, parse
from engine.serving.review import ENGINES, ServingOptions
from engine.serving.vllm import settings_for_version
from engine.sizing.rule import SizeRequest

if TYPE_CHECKING:
    from bot.features.hub_lookup import HubResult
    from bot.store import Preferences

NOT_A_QUESTION = "not a sizing question"
# The fields a user's settings fill when the question does not say them, in the order their notes are written.
PREFERRED_FIELDS = ("precision", "kv_precision", "context_tokens", "batch", "region")


class ModelLookup(Protocol):
    """The Hugging Face Hub as a question needs it (bot.features.hub_lookup.HubLookup)."""

    @property
    def enabled(self) -> bool: ...

    async def lookup(self, repo_id: str) -> HubResult: ...


@dataclass(frozen=True, slots=True)
class Asker:
    """Whom an answer is for: their settings (None: nobody's, as for the CLI and /quote) and whose reference the
    top-up link carries (None: nobody's, as in a group or a pasted inline answer)."""

    preferences: Preferences | None = None
    user_id: int | None = None
    topup_secret: str | None = None


NOBODY = Asker()


@dataclass(slots=True)
class Asked:
    """What a question came to."""

    result: ParseResult  # the parse, with what the Hub said about a repository it names
    request: SizeRequest | None = None  # the question as the user set it (a follow-up applied), settings not filled
    filled: SizeRequest | None = None  # the same with the asker's settings filled in: what was answered
    from_settings: set[str] = field(default_factory=set)  # the fields the settings filled
    answer: Answer | None = None
    needs_card: bool = False  # a bare card count ("2x") followed up a question that named no card

    @property
    def error(self) -> str | None:
        """Why nothing was answered: the parse's error ("not a sizing question" when it gave none)."""
        if self.answer is not None or self.needs_card:
            return None
        return self.result.error or NOT_A_QUESTION

    @property
    def told_language(self) -> str | None:
        return self.result.told_language


async def ask(text: str, catalog: Catalog, vocabulary: Vocabulary, asker: Asker = NOBODY, *,
              hub: ModelLookup | None = None,
              previous: Callable[[], Awaitable[SizeRequest | None]] | None = None,
              vllm_version: str | None = None) -> Asked:
    """Answer `text`. `hub`: look up a repository the registry does not know (None: size it from its name).
    `previous`: the question a follow-up ("and in fp8?") changes, asked for only when the text is one.
    `vllm_version`: the vLLM release whose accounting the serving check follows (None: the newest)."""
    result = parse(text, vocabulary)
    asked = Asked(result)
    if hub is not None and result.hub_candidate is not None and hub.enabled:
        from bot.features.hub_lookup import hub_question

        found = await hub.lookup(result.hub_candidate)
        asked.result = result = hub_question(text, result, found, vocabulary)
    earlier = delta = None
    if previous is not None:  # with nothing to follow up (the CLI), every text is a question of its own
        from engine.answer.followup import apply_followup, delta_of, shown_of  # not on every start of the CLI

        delta = delta_of(result)
        earlier = await previous() if delta is not None else None
    if delta is not None and earlier is not None:
        shown = shown_of(answer_for(with_preferences(earlier, asker.preferences)[0], catalog,
                                    Asker(asker.preferences, None, asker.topup_secret)))
        followup = apply_followup(earlier, delta, shown, catalog=catalog)
        if followup.needs_card:
            asked.needs_card = True
            return asked
        request = followup.request
    elif result.request is None:
        return asked
    else:
        request = result.request
    asked.request = request
    asked.filled, asked.from_settings = with_preferences(request, asker.preferences)
    asked.answer = answer_for(asked.filled, catalog, asker, registry=await hub_registry(request, hub),
                              engine=result.launch_engine, vllm_version=vllm_version)
    return asked


def ask_blocking(text: str, catalog: Catalog, vocabulary: Vocabulary, *, hub: ModelLookup | None = None,
                 vllm_version: str | None = None) -> Asked:
    """`ask` from synchronous code (the CLI): no earlier question, no settings, and a `hub` whose lookup blocks
    (HubLookup.lookup_sync, on an event loop of its own), so `ask` never waits and is run to its end here, by
    hand. An event loop for every question would import asyncio, which costs every start of `cardfit ask` more
    than the rest of the CLI (python -X importtime)."""
    return _run_to_end(ask(text, catalog, vocabulary, hub=hub, vllm_version=vllm_version))


def _run_to_end(coroutine: Coroutine[Any, Any, Asked]) -> Asked:
    try:
        coroutine.send(None)
    except StopIteration as finished:
        result: Asked = finished.value
        return result
    coroutine.close()
    raise RuntimeError("ask waited on something: ask_blocking's inputs must not")


def answer_for(request: SizeRequest, catalog: Catalog, asker: Asker = NOBODY, *,
               registry: Registry | None = None, engine: str | None = None,
               vllm_version: str | None = None) -> Answer:
    """The answer step: the request as it stands (settings already filled), with the asker's billing, coin,
    engine and vLLM release. `engine`: the one a pasted launch line names ("llama-server ..."), else the one the
    question names ("with llama.cpp", kept through follow-ups: `request.engine`); either wins over /set engine."""
    prefs = asker.preferences
    if engine not in ENGINES:
        engine = request.engine
    if engine not in ENGINES:
        engine = prefs.engine if prefs is not None and prefs.engine in ENGINES else None  # /set engine
    if vllm_version is None and prefs is not None and prefs.vllm is not None:
        vllm_version = prefs.vllm  # /set vllm; an explicit vllm_version (`--vllm-version`) wins
        try:
            settings_for_version(vllm_version)
        except ValueError:  # stored by a version of this code that knew that release: the newest answers
            vllm_version = None
    return build_answer(request, catalog, user_id=asker.user_id, topup_secret=asker.topup_secret,
                        billing=prefs.billing if prefs is not None else None,
                        coin=prefs.coin if prefs is not None else None, registry=registry,
                        serving=ServingOptions(engine=engine, vllm_version=vllm_version))


def with_preferences(request: SizeRequest, prefs: Preferences | None) -> tuple[SizeRequest, set[str]]:
    """A copy of `request` with what the user did not say filled from their settings, and the names of the fields
    filled (with none filled, the copy encodes as `request`); `request` itself when there are no settings."""
    if prefs is None:
        return request, set()
    filled = copy.copy(request)
    filled.assumed = list(request.assumed)
    return filled, apply_preferences(filled, prefs)


def apply_preferences(request: SizeRequest, prefs: Preferences) -> set[str]:
    """Fill, in place, what the user did not say from their settings; return the names of the fields filled."""
    filled = set()
    for name in PREFERRED_FIELDS:
        value = getattr(prefs, name)
        if value is not None and getattr(request, name) is None:
            setattr(request, name, value)
            filled.add(name)
    request.assumed.extend(Note(f"{name} from your settings", "from_settings", field=name) for name in sorted(filled))
    return filled


async def hub_registry(request: SizeRequest, hub: ModelLookup | None) -> Registry | None:
    """The registry with the looked-up model when `request` names a Hub repository the registry does not know (a
    question just looked up, or a follow-up to one: the lookup has kept it); None to use the default."""
    model = request.model
    if hub is None or not model or "/" not in model or default_registry().get(model) is not None:
        return None
    found = await hub.lookup(model)
    return default_registry().with_models(found.hub.shape) if found.hub is not None else None
