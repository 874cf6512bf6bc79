"""Support staff (inline mode, /quote, deep links) and operators (reloads, announcements, price alerts)."""
from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
import yaml

from bot.config import load_settings
from bot.features.core import CatalogHolder
from bot.operators.announce import Announcer
from bot.operators.announcements import split_message
from bot.store import Store
from catalog.loader import load_catalog
from engine.sizing.payload import decode_request, encode_request
from engine.sizing.rule import SizeRequest
from tests.support.botharness import BOT_USERNAME, TOKEN, Harness, buttons, edit_catalog

ADMIN, STAFF, CUSTOMER = 42, 43, 44
CHANNEL = "@cardfit_news"
BUNDLED = Path(__file__).resolve().parents[1] / "catalog" / "data" / "gpurenthub.yaml"


@pytest.fixture
def settings(tmp_path, catalog_file):
    return load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), admin_ids=f"{ADMIN},99",
                         staff_ids=f"{STAFF}", announce_chat=CHANNEL, catalog=str(catalog_file),
                         topup_secret="topup-key-for-tests", rate_limit_messages=50)


def admin_texts(bot: Harness) -> list[str]:
    return [p["text"] for p in to(bot, ADMIN)]


def channel_posts(bot: Harness) -> list[dict]:
    return [c.params for c in bot.request.sent("sendMessage") if c.params["chat_id"] == CHANNEL]


def to(bot: Harness, chat_id: int) -> list[dict]:
    return [c.params for c in bot.request.sent("sendMessage") if c.params["chat_id"] == chat_id]


def admin_button(bot: Harness, icon: str) -> dict:
    """The latest preview's Post (📣) or Discard (🗑) button sent to the admin."""
    return [b for p in to(bot, ADMIN) for b in buttons(p) if b["text"].startswith(icon)][-1]


# -- staff ---------------------------------------------------------------------------------------------------

async def test_inline_answer_with_alternatives(settings):
    async with Harness(settings) as bot:
        await bot.inline(CUSTOMER, "70B int4 32k")
        call = bot.request.sent("answerInlineQuery")[-1].params
        results = call["results"]
        assert 1 < len(results) <= 3 and results[0]["type"] == "article"
        assert "47.7 GB" in results[0]["title"] and "A40" in results[0]["title"]
        content = results[0]["input_message_content"]
        assert content["parse_mode"] == "HTML" and "Top up" in content["message_text"]
        assert call.get("is_personal") is not True and call["cache_time"] == 300


async def test_inline_is_personal_when_preferences_shape_it(settings):
    async with Harness(settings) as bot:
        await bot.send(CUSTOMER, "/set precision fp8")
        await bot.inline(CUSTOMER, "70B")
        call = bot.request.sent("answerInlineQuery")[-1].params
        assert call["is_personal"] is True and "FP8" in call["results"][0]["input_message_content"]["message_text"]


async def test_inline_unparseable_and_long_query(settings):
    async with Harness(settings) as bot:
        await bot.inline(CUSTOMER, "hello there")
        results = bot.request.sent("answerInlineQuery")[-1].params["results"]
        assert len(results) == 1 and results[0]["title"] == "How to ask Cardfit"
        await bot.inline(CUSTOMER, "70B int4 " + "x" * 600)
        assert len(bot.request.sent("answerInlineQuery")[-1].params["results"]) >= 1


async def test_quote_is_neutral_and_ends_with_a_deep_link(settings):
    async with Harness(settings) as bot:
        await bot.send(STAFF, "/set precision fp8")
        await bot.send(STAFF, "/set coin XMR")
        await bot.send(STAFF, "/quote 70B int4 32k")
        text = to(bot, STAFF)[-1]["text"]
        assert "INT4" in text and "coin=USDT" in text and "&amp;ref=" not in text  # no staff prefs or ref
        link = text.rsplit("https://t.me/", 1)[1].split('"')[0].split("<")[0].strip()
        assert link.startswith(f"{BOT_USERNAME}?start=")
        payload = link.split("start=")[1]
        assert len(payload) <= 64 and all(ch.isalnum() or ch in "_-" for ch in payload)
        await bot.send(CUSTOMER, f"/start {payload}")
        answer = to(bot, CUSTOMER)[-1]["text"]
        assert "47.7 GB" in answer and "1x A40" in answer


async def test_quote_and_reload_refused_for_others(settings):
    async with Harness(settings) as bot:
        await bot.send(CUSTOMER, "/quote 70B")
        assert to(bot, CUSTOMER)[-1]["text"] == "This command is for staff only."
        await bot.send(STAFF, "/reload")
        assert to(bot, STAFF)[-1]["text"] == "This is for admins only."


@pytest.mark.parametrize("payload", ["", "M", "Mllama-3_1-70bPi4Pi4", "S0", "S1e99", "Sabc", "Xyz1", "m70",
                                     "Mllama-3_1-70bC0k", "Mgpt-9000", "S7B99999", "%%", "a" * 65,
                                     "Mllama-3_1-70bWz", "S70Kxx", "S70N99"])
async def test_forged_deep_link_payloads_get_help(settings, payload):
    async with Harness(settings) as bot:
        await bot.send(CUSTOMER, f"/start {payload}".strip())
        text = to(bot, CUSTOMER)[-1]["text"]
        assert "Ask in your own words" in text or "Memory needed" not in text


def test_payload_round_trip():
    request = SizeRequest(model="deepseek-r1-distill-llama-70b", precision="fp8", context_tokens=131072, batch=32,
                          workload="inference", kv_precision="fp8", card="rtx-6000-ada", gpu_count=8)
    payload = encode_request(request)
    assert len(payload) <= 64
    again = decode_request(payload)
    assert (again.model, again.precision, again.context_tokens, again.batch, again.kv_precision, again.card,
            again.gpu_count) == ("deepseek-r1-distill-llama-70b", "fp8", 131072, 32, "fp8", "rtx-6000-ada", 8)
    assert decode_request(encode_request(SizeRequest(params_b=1.5, context_tokens=1000))).params_b == 1.5


async def test_a_deep_link_with_a_tiny_size_is_an_answer_not_a_traceback(bot):
    for payload in ("S1e-306", "S5e-324", "S0.0000001"):
        await bot.send(173, f"/start {payload}")
        assert "Traceback" not in bot.last_text(173)
    assert not admin_texts(bot)


# -- operators: reload, preview, post -----------------------------------------------------------------------

async def test_price_change_preview_then_post_once_across_a_restart(settings, catalog_file):
    async with Harness(settings) as bot:
        edit_catalog(catalog_file, a40=260, l4=230)
        await bot.send(ADMIN, "/reload")
        previews = [p for p in to(bot, ADMIN) if "Preview" in p["text"]]
        assert previews and "A40" in previews[-1]["text"] and "$240 → $260/month (+8.3 %)" in previews[-1]["text"]
        assert "$0.33 → $0.36/hour" in previews[-1]["text"] and "−8.0 %" in previews[-1]["text"]
        assert len([p for p in to(bot, 99) if "Preview" in p["text"]]) == 1  # every admin gets it
        post = next(b for b in buttons(previews[-1]) if b["text"].startswith("📣"))
        assert bot.app.bot_data["catalog"].catalog.card("a40").price_monthly_usd == 260  # in service already
        assert not channel_posts(bot)
    async with Harness(settings) as bot:  # restart between preview and post
        await bot.press(ADMIN, post["callback_data"])
        await bot.press(ADMIN, post["callback_data"])  # a second tap
        await bot.send(ADMIN, "/reload")  # and a second reload
        assert len(channel_posts(bot)) == 1
        assert "A40" in channel_posts(bot)[0]["text"]
        assert "already handled" in to(bot, ADMIN)[-2]["text"] or \
            "already" in " ".join(p["text"] for p in to(bot, ADMIN))


async def test_non_admin_cannot_press_post(settings, catalog_file):
    async with Harness(settings) as bot:
        edit_catalog(catalog_file, a40=250)
        await bot.send(ADMIN, "/reload")
        post = admin_button(bot, "📣")
        await bot.press(CUSTOMER, post["callback_data"])
        assert not channel_posts(bot)
        assert bot.request.sent("answerCallbackQuery")[-1].params["show_alert"] is True


async def test_discard_counts_as_handled_and_next_change_diffs_against_last_post(settings, catalog_file):
    async with Harness(settings) as bot:
        edit_catalog(catalog_file, a40=250)
        await bot.send(ADMIN, "/reload")
        discard = admin_button(bot, "🗑")
        await bot.press(ADMIN, discard["callback_data"])
        assert "Discarded" in to(bot, ADMIN)[-1]["text"]
        edit_catalog(catalog_file, a40=250, l4=260)
        await bot.send(ADMIN, "/reload")
        preview = [p for p in to(bot, ADMIN) if "Preview" in p["text"]][-1]["text"]
        assert "A40" in preview and "L4" in preview  # nothing skipped: diffed against the last posted version


async def test_broken_catalog_keeps_the_old_one_and_tells_the_admins(settings, catalog_file):
    async with Harness(settings) as bot:
        data = yaml.safe_load(catalog_file.read_text())
        data["cards"][0]["vram_gb"] = -1
        catalog_file.write_text(yaml.safe_dump(data, sort_keys=False))
        await bot.send(ADMIN, "/reload")
        for admin in (ADMIN, 99):
            assert "rejected" in to(bot, admin)[-1]["text"] and "vram_gb" in to(bot, admin)[-1]["text"]
        assert bot.app.bot_data["catalog"].catalog.card("mi300x").vram_gb == 192
        await bot.send(CUSTOMER, "70B bf16")
        assert "MI300X" in to(bot, CUSTOMER)[-1]["text"]


async def test_watch_job_picks_up_a_change_by_hash(settings, catalog_file):
    async with Harness(settings) as bot:
        announcer = bot.app.bot_data["services"].announcer
        assert (await announcer.check()).status == "unchanged"
        catalog_file.write_text(catalog_file.read_text() + "\n# a comment only\n")
        assert (await announcer.check()).status == "no_changes"  # new hash, nothing customer-visible
        edit_catalog(catalog_file, h200_sxm=1)  # unknown id: no change
        edit_catalog(catalog_file, **{"h200-sxm": 2190})
        outcome = await announcer.check()
        assert outcome.status == "previewed"
        assert (await announcer.check()).status == "unchanged"


async def test_auto_announce_posts_without_preview(tmp_path, catalog_file):
    settings = load_settings(bot_token=TOKEN, db=str(tmp_path / "auto.sqlite3"), admin_ids=f"{ADMIN}",
                             announce_chat=CHANNEL, announce_auto=True, catalog=str(catalog_file))
    async with Harness(settings) as bot:
        edit_catalog(catalog_file, a40=199)
        await bot.send(ADMIN, "/reload")
        assert len(channel_posts(bot)) == 1 and "−17.1 %" in channel_posts(bot)[0]["text"]


def test_long_announcement_splits_cleanly():
    text = "\n".join(f"• line {i} " + "x" * 90 for i in range(200))
    parts = split_message(text)
    assert len(parts) > 1 and all(len(p) <= 4096 for p in parts)
    assert "\n".join(parts) == text


async def test_an_invalid_version_is_parsed_once_off_the_event_loop_and_reported_once(bot, catalog_file,
                                                                                     monkeypatch):
    import bot.operators.catalog_service as service_module

    threads: list[str] = []
    real = service_module.parse_catalog_bytes

    def spy(raw, name):
        threads.append(threading.current_thread().name)
        return real(raw, name)

    monkeypatch.setattr(service_module, "parse_catalog_bytes", spy)
    announcer = bot.app.bot_data["services"].announcer
    catalog_file.write_text("cards: [")
    first = await announcer.check()
    assert first.status == "invalid" and first.notified
    for _ in range(3):  # watch ticks over the same broken bytes
        again = await announcer.check()
        assert again.status == "invalid" and not again.notified
    assert len(threads) == 1 and threads[0] != threading.main_thread().name
    assert len([t for t in admin_texts(bot) if "rejected" in t]) == 1


async def test_reload_refuses_a_latin1_file_the_start_would_refuse(bot, catalog_file):
    catalog_file.write_bytes(BUNDLED.read_text(encoding="utf-8")
                             .replace("GPU Rent Hub\n", "GPU Rent Hüb\n", 1).encode("latin-1", "replace"))
    await bot.send(ADMIN, "/reload")
    assert "not UTF-8 text" in admin_texts(bot)[-1]
    assert bot.app.bot_data["catalog"].catalog.provider == "GPU Rent Hub"  # the old version stays in service


# -- price alerts -------------------------------------------------------------------------------------------

async def test_subscribe_list_unsubscribe(settings):
    async with Harness(settings) as bot:
        await bot.send(CUSTOMER, "/subscribe H100 SXM below 1500")
        assert "Subscribed to <b>H100 SXM</b> below $1,500/month" in to(bot, CUSTOMER)[-1]["text"]
        await bot.send(CUSTOMER, "/subscribe A40")
        await bot.send(CUSTOMER, "/subscriptions")
        assert "H100 SXM below" in to(bot, CUSTOMER)[-1]["text"] and "A40" in to(bot, CUSTOMER)[-1]["text"]
        await bot.send(CUSTOMER, "/subscribe voodoo")
        assert "No card called voodoo" in to(bot, CUSTOMER)[-1]["text"]
        await bot.send(CUSTOMER, "/subscribe A40 below cheap")
        assert "Usage" in to(bot, CUSTOMER)[-1]["text"]
        await bot.send(CUSTOMER, "/unsubscribe")
        assert "2 subscription(s)" in to(bot, CUSTOMER)[-1]["text"]


async def test_alerts_reach_matching_subscribers_once(settings, catalog_file):
    async with Harness(settings) as bot:
        await bot.send(101, "/subscribe A40 below 250")
        await bot.send(102, "/subscribe A40 below 200")  # does not match $245
        await bot.send(103, "/subscribe A40")
        await bot.send(104, "/subscribe L4")  # unchanged card
        edit_catalog(catalog_file, a40=245)
        await bot.send(ADMIN, "/reload")
        post = admin_button(bot, "📣")
        await bot.press(ADMIN, post["callback_data"])
        await bot.app.bot_data["services"].announcer.start_delivery()
        assert len([p for p in to(bot, 101) if p["text"].startswith("🔔 <b>")]) == 1
        assert not [p for p in to(bot, 102) if p["text"].startswith("🔔 <b>")]
        assert "now costs $245/month" in to(bot, 103)[-1]["text"]
        assert not [p for p in to(bot, 104) if p["text"].startswith("🔔 <b>")]
        edits = [c.params for c in bot.request.sent("editMessageText")]
        assert any("sent 2 / 2" in p["text"] for p in to(bot, ADMIN) + edits)


class CrashingSender:
    """Sends through a list; after `crash_after` sends it dies like a killed process would."""

    def __init__(self, crash_after: int | None = None):
        self.sent: list[tuple[int | str, str]] = []
        self.crash_after = crash_after

    async def send_message(self, chat_id, text, **kwargs):
        if self.crash_after is not None and len(self.sent) >= self.crash_after:
            raise asyncio.CancelledError("process killed")
        self.sent.append((chat_id, text))

        class Message:
            message_id = len(self.sent)

        return Message()

    async def edit_message_text(self, *args, **kwargs):
        return True


async def test_crash_half_way_through_alerts_resumes_exactly_once(tmp_path, catalog_file):
    settings = load_settings(db=str(tmp_path / "alerts.sqlite3"), announce_chat=CHANNEL, catalog=str(catalog_file))
    store = await Store.open(settings.db)
    try:
        holder = CatalogHolder(load_catalog(str(catalog_file)))
        first = Announcer(settings, holder, store, CrashingSender(crash_after=1 + 60))  # channel post + 60 alerts
        await first.ensure_baseline()
        for user_id in range(1000, 1150):
            await store.subscribe(user_id, "a40", None)
        edit_catalog(catalog_file, a40=230)
        outcome = await first.check()
        with pytest.raises(asyncio.CancelledError):
            await first.post(outcome.announcement_id)
            await first.start_delivery()
        progress = await store.alert_progress(outcome.announcement_id)
        assert progress["sent"] == 60 and progress["queued"] == 90
        second_sender = CrashingSender()
        second = Announcer(settings, holder, store, second_sender)  # "restart"
        await second.resume()
        await second.start_delivery()
        alerted = [chat for chat, _ in first.sender.sent[1:]] + [chat for chat, _ in second_sender.sent]
        assert sorted(alerted) == list(range(1000, 1150))  # every subscriber exactly once
        assert not [chat for chat, _ in second_sender.sent if chat == CHANNEL]  # the post is not repeated
    finally:
        await store.close()


async def test_forbidden_marks_subscriber_inactive(settings, catalog_file):
    async with Harness(settings) as bot:
        await bot.send(105, "/subscribe A40")
        await bot.send(106, "/subscribe A40")
        edit_catalog(catalog_file, a40=235)
        await bot.send(ADMIN, "/reload")
        post = admin_button(bot, "📣")
        bot.request.fail("sendMessage", 403, "Forbidden: bot was blocked by the user", times=0)
        svc = bot.app.bot_data["services"]
        original = bot.request.do_request

        async def blocked_105(url, method, request_data=None, **kwargs):
            if url.endswith("sendMessage") and request_data is not None and \
                    request_data.parameters.get("chat_id") == 105:
                return 403, b'{"ok": false, "error_code": 403, "description": "Forbidden: bot was blocked by the user"}'
            return await original(url, method, request_data, **kwargs)

        bot.request.do_request = blocked_105
        await bot.press(ADMIN, post["callback_data"])
        await svc.announcer.start_delivery()
        assert (await svc.store.get_preferences(105)).blocked
        assert await svc.store.subscribers_for("a40") == [(106, None)]


# -- corner cases of previews, inline answers, channel posts and alerts ---------------------------------------

async def test_an_older_preview_is_superseded_by_a_newer_one(settings, catalog_file):
    async with Harness(settings) as bot:
        edit_catalog(catalog_file, l4=260)
        await bot.send(ADMIN, "/reload")
        older = admin_button(bot, "📣")
        edit_catalog(catalog_file, l4=270)
        await bot.send(ADMIN, "/reload")
        newer = admin_button(bot, "📣")
        await bot.press(ADMIN, newer["callback_data"])
        await bot.press(ADMIN, older["callback_data"])
        posts = channel_posts(bot)
        assert len(posts) == 1 and "$250 → $270/month" in posts[0]["text"]
        assert "superseded" in to(bot, ADMIN)[-1]["text"]


async def test_going_back_to_an_earlier_price_is_announced(settings, catalog_file):
    original = catalog_file.read_text()
    async with Harness(settings) as bot:
        edit_catalog(catalog_file, a40=200)
        await bot.send(ADMIN, "/reload")
        post = admin_button(bot, "📣")
        await bot.press(ADMIN, post["callback_data"])
        catalog_file.write_text(original)  # exactly the baseline file again
        await bot.send(ADMIN, "/reload")
        post = admin_button(bot, "📣")
        await bot.press(ADMIN, post["callback_data"])
        posts = channel_posts(bot)
        assert len(posts) == 2 and "$200 → $240/month" in posts[1]["text"]


async def test_inline_results_carry_no_ref_of_the_person_typing(settings):
    async with Harness(settings) as bot:
        await bot.inline(STAFF, "70B int4 32k")
        results = bot.request.sent("answerInlineQuery")[-1].params["results"]
        assert all("ref=" not in r["input_message_content"]["message_text"].replace('href="', "") for r in results)


async def test_inline_error_names_the_value(settings):
    async with Harness(settings) as bot:
        await bot.inline(CUSTOMER, "0B model")
        results = bot.request.sent("answerInlineQuery")[-1].params["results"]
        assert results[0]["title"] == "0B is not a model size"


async def test_a_channel_that_refuses_the_post_is_reported_and_the_admin_not_blocked(settings, catalog_file):
    async with Harness(settings) as bot:
        edit_catalog(catalog_file, a40=250)
        await bot.send(ADMIN, "/reload")
        post = admin_button(bot, "📣")
        bot.request.fail("sendMessage", 403, "Forbidden: bot is not a member of the channel chat")
        await bot.press(ADMIN, post["callback_data"])
        assert "Could not post to @cardfit_news" in to(bot, ADMIN)[-1]["text"]
        assert not (await bot.app.bot_data["services"].store.get_preferences(ADMIN)).blocked
        await bot.press(ADMIN, post["callback_data"])  # once the channel works again
        assert len(channel_posts(bot)) == 1
        await bot.press(ADMIN, post["callback_data"])  # a further tap still gets an answer
        assert "already posted" in to(bot, ADMIN)[-1]["text"]


async def test_alerts_in_the_subscribers_language_and_for_removed_cards(settings, catalog_file):
    async with Harness(settings) as bot:
        await bot.send(720, "/subscribe RTX 4090", language_code="de")
        data = yaml.safe_load(catalog_file.read_text())
        data["cards"] = [card for card in data["cards"] if card["id"] != "rtx-4090"]
        catalog_file.write_text(yaml.safe_dump(data, sort_keys=False))
        await bot.send(ADMIN, "/reload")
        post = admin_button(bot, "📣")
        await bot.press(ADMIN, post["callback_data"])
        await bot.app.bot_data["services"].announcer.start_delivery()
        assert "RTX 4090</b> wird bei GPU Rent Hub nicht mehr angeboten" in to(bot, 720)[-1]["text"]
        await bot.send(720, "/subscriptions", language_code="de")
        assert "(nicht mehr im Angebot)" in to(bot, 720)[-1]["text"]


async def test_reload_of_an_already_reported_broken_file_still_answers(settings, catalog_file):
    async with Harness(settings) as bot:
        catalog_file.write_text("cards: [")
        announcer = bot.app.bot_data["services"].announcer
        assert (await announcer.check()).notified  # the watch job tells the admins once
        await bot.send(ADMIN, "/reload")
        assert "rejected" in to(bot, ADMIN)[-1]["text"]
        assert len([p for p in to(bot, ADMIN) if "rejected" in p["text"]]) == 2


@pytest.mark.parametrize("data", ["ann:post:" + "9" * 30, "ann:discard:9223372036854775808",
                                  "annp:again:" + "9" * 30 + ":0", "annp:there:1:" + "9" * 30])
async def test_an_admins_forged_id_past_the_stores_integers_is_answered_not_a_traceback(bot, data):
    await bot.press(ADMIN, data)
    assert bot.request.sent("answerCallbackQuery")[-1].params.get("text")  # a notice on the button
    assert not [text for text in admin_texts(bot) if "Cardfit error" in text]  # no traceback to the admins
