"""The reply cache (bot/features/reply_cache.py) changes no reply: for every reader, view and setting, the reply from
the
cache is the one built from a fresh answer, top-up reference included; a new catalog empties it; it stays bounded."""
from __future__ import annotations

import pytest
import pytest_asyncio

from bot.config import load_settings
from bot.features.caller import Caller, UserInfo
from bot.features.conversation import Conversation
from bot.features.reply_cache import Entry, ReplyCache
from bot.operators.catalog_service import CatalogHolder
from bot.store import Preferences, Store
from catalog.loader import load_catalog
from engine.parse import parse
from engine.sizing.payload import encode_request

QUESTIONS = ["70B at 4-bit, 32k context", "QLoRA Llama 3.1 70B", "Mixtral 8x7B on an RTX 4090",
             "Wie viel VRAM braucht Qwen2.5 72B in FP8?", "gpt-oss-120b", "405B int4", "what does an H100 cost",
             "H100 or A100 for 70B int4", "Llama 3.1 8B on an RTX 4090 in btc", "7B bf16 max context on an A40",
             "70B int4 on 2x RTX 4090"]
PREFERENCES = [Preferences(user_id=0), Preferences(user_id=0, billing="week", coin="BTC", precision="fp8"),
               Preferences(user_id=0, engine="llama.cpp", context_tokens=131072)]


@pytest_asyncio.fixture
async def conversation(tmp_path):
    settings = load_settings(db=str(tmp_path / "c.sqlite3"), topup_secret="test-secret", hf_lookup=False)
    store = await Store.open(settings.db)
    yield Conversation(settings, CatalogHolder(load_catalog(settings.catalog)), store)
    await store.close()


def fresh(conversation: Conversation, request, user: UserInfo, prefs: Preferences, lang: str, *, anonymous: bool,
          details: bool, coin_picker: bool):
    """The reply as it was built before the cache: one answer for this user, rendered."""
    answer = conversation.answer(request, user, prefs, anonymous=anonymous)
    payload = _encoded(request)
    return answer.error, conversation.answer_reply(answer, "en" if lang == "en" else lang, payload, prefs,
                                                   details=details, coin_picker=coin_picker)


def _encoded(request):
    try:
        return encode_request(request)
    except Exception:
        return None


@pytest.mark.parametrize("prefs", PREFERENCES)
async def test_every_cached_reply_is_the_fresh_one_for_its_reader(conversation, prefs):
    for question in QUESTIONS:
        parsed = parse(question, conversation.catalogs.vocabulary).request
        assert parsed is not None, question
        request = conversation.with_preferences(parsed, prefs)
        payload = _encoded(request)
        for user_id in (11, 12, 13):  # the first fills the entry, the others read it
            for lang, anonymous, details, coin_picker in (("en", False, False, False), ("de", False, True, False),
                                                          ("en", True, False, False), ("en", False, False, True)):
                user = UserInfo(user_id, lang)
                got = conversation._replied(request, user, prefs, lang, payload, anonymous=anonymous,
                                            details=details, coin_picker=coin_picker)
                assert got == fresh(conversation, request, user, prefs, lang, anonymous=anonymous, details=details,
                                    coin_picker=coin_picker), (question, user_id, lang, anonymous, details)
    assert conversation.replies.hits > conversation.replies.misses


async def test_two_users_get_their_own_top_up_reference(conversation):
    caller_a = Caller(UserInfo(21, "en"), Preferences(user_id=21))
    caller_b = Caller(UserInfo(22, "en"), Preferences(user_id=22))
    a = await conversation.ask(caller_a, "70B int4")
    b = await conversation.ask(caller_b, "70B int4")
    assert conversation.replies.hits >= 1
    links = [[button.url for row in reply.buttons for button in row if button.url] for reply in (a, b)]
    assert links[0] and links[1] and links[0] != links[1]
    assert links[0][0].replace("&amp;", "&") not in b.text.replace("&amp;", "&")
    group = await conversation.ask(caller_a, "70B int4", shared=True)
    group_link = [button.url for row in group.buttons for button in row if button.url]
    assert group_link and group_link[0] not in links[0] + links[1]  # nobody's reference in a group


async def test_a_new_catalog_empties_the_cache(conversation, tmp_path):
    caller = Caller(UserInfo(31, "en"), Preferences(user_id=31))
    await conversation.ask(caller, "70B int4")
    assert len(conversation.replies) == 1
    conversation.catalogs.put(conversation.catalogs.loaded.__class__(
        load_catalog(conversation.settings.catalog).catalog, conversation.catalogs.loaded.path, "other-sha"))
    await conversation.ask(caller, "7B bf16")
    assert len(conversation.replies) == 1 and conversation.replies.misses == 2


def test_the_cache_is_bounded_and_keeps_the_recent_entries():
    cache = ReplyCache(max_entries=3)
    catalog = object()
    built = []

    def build(name):
        def make():
            built.append(name)
            return Entry(None, None, None, None, None)  # type: ignore[arg-type]
        return make

    for name in "abcd":
        cache.get(catalog, (name,), build(name))  # type: ignore[arg-type]
    cache.get(catalog, ("d",), build("d"))  # type: ignore[arg-type]
    cache.get(catalog, ("a",), build("a"))  # type: ignore[arg-type]
    assert len(cache) == 3 and built == ["a", "b", "c", "d", "a"]
