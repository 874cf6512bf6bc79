"""Handler tests: real PTB Updates through the real Application, with a recording fake request layer."""
from __future__ import annotations

import asyncio
import re

import pytest

from bot.config import load_settings
from tests.support.botharness import BOT_USERNAME, TOKEN, Harness, buttons, network_error

ADMIN = 42
STAFF = 43
QUESTIONS_PER_WINDOW = 8
FLOOD_NOTICE = "faster than I can answer"


@pytest.fixture
def settings(tmp_path):
    return load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), admin_ids=f"{ADMIN}",
                         staff_ids=f"{STAFF}", topup_secret="test-secret-0123456789",
                         rate_limit_messages=QUESTIONS_PER_WINDOW, rate_limit_window_s=60)


async def test_post_init_sets_commands_in_en_and_de(bot):
    calls = bot.request.sent("setMyCommands")
    languages = {c.params.get("language_code") for c in calls}
    assert {"en", "de"} <= languages
    names = {cmd["command"] for cmd in calls[0].params["commands"]}
    assert {"size", "cards", "card", "compare", "settings", "set", "help"} <= names


async def test_private_question_gets_the_answer_with_keyboard(bot):
    await bot.send(1, "70B at 4-bit, 32k context")
    reply = bot.replies(1)[-1]
    assert reply["parse_mode"] == "HTML"
    text = reply["text"]
    # vLLM would not start at 32k on the rule's 1x A40 (said in one line): 2x A40 leads, and the top-up pays for it
    assert "47.7 GB" in text and "Fits on <b>2x A40</b>" in text and "$456/month" in text
    assert "By the sizing rule 1x A40 holds it with 0.3 GB to spare, but vLLM would not start there at 32k" in text
    assert len(text) < 4096
    labels = [b["text"] for b in buttons(reply)]
    assert {"BF16", "FP8", "✓ INT4", "8k", "✓ 32k", "128k"} <= set(labels)
    topup = [b for b in buttons(reply) if "url" in b]
    assert topup and topup[0]["text"] == "Top up $456 in USDT"
    assert "ref=" in topup[0]["url"] and "ref=1&" not in topup[0]["url"]
    assert all(len(b["callback_data"].encode()) <= 64 for b in buttons(reply) if "callback_data" in b)


async def test_a_short_window_model_gets_its_window_as_the_ticked_context_button(bot):
    await bot.send(1, "llama 2 70b")
    labels = [b["text"] for b in buttons(bot.replies(1)[-1])]
    assert ["✓ 4k", "8k", "32k", "128k"] == [label for label in labels if label.lstrip("✓ ").endswith("k")]


@pytest.mark.parametrize("question", ["whisper large v3", "clip vit-l/14", "Whisper large-v3 auf einer 4090"])
async def test_a_model_without_a_kv_cache_gets_no_context_row(bot, question):
    """Its answer does not depend on a context (no KV cache is sized): a 32k button changed nothing but a note."""
    await bot.send(1, question)
    labels = [b["text"] for b in buttons(bot.replies(1)[-1])]
    assert "✓ BF16" in labels and not [label for label in labels if label.lstrip("✓ ").endswith("k")]


async def test_german_user_gets_german(bot):
    await bot.send(2, "Wie viel VRAM brauche ich für Llama 3.1 70B in 4 Bit?", language_code="de-DE")
    text = bot.last_text(2)
    assert "Benötigter Speicher" in text and "Gewichte" in text


async def test_toggle_edits_the_same_message(bot):
    await bot.send(3, "70B at 4-bit, 32k context")
    fp8 = next(b for b in buttons(bot.replies(3)[-1]) if b["text"] == "FP8")
    await bot.press(3, fp8["callback_data"])
    edit = bot.request.sent("editMessageText")[-1].params
    assert edit["message_id"] == 1000 and "FP8" in edit["text"] and "✓ FP8" in [b["text"] for b in buttons(edit)]
    assert bot.request.sent("answerCallbackQuery")


async def test_details_expand_the_arithmetic(bot):
    await bot.send(4, "70B int4")
    details = next(b for b in buttons(bot.replies(4)[-1]) if "Details" in b["text"])
    await bot.press(4, details["callback_data"])
    edit = bot.request.sent("editMessageText")[-1].params
    assert "70 x 0.5 B = 35.0 GB" in edit["text"]


async def test_coin_picker_saves_the_coin(bot):
    await bot.send(5, "7B bf16")
    picker = next(b for b in buttons(bot.replies(5)[-1]) if b["text"].startswith("🪙"))
    await bot.press(5, picker["callback_data"])
    btc = next(b for b in buttons(bot.request.sent("editMessageText")[-1].params) if b["text"] == "BTC")
    await bot.press(5, btc["callback_data"])
    edit = bot.request.sent("editMessageText")[-1].params
    assert any(b.get("url", "").find("coin=BTC") > 0 for b in buttons(edit))
    await bot.send(5, "/settings")
    assert "coin: <b>BTC</b>" in bot.last_text(5)


@pytest.mark.parametrize("data", ["zz:1", "f:en:%%%", "f:en:Mllama-9000", "k:en:DOGE:S7", "x:9:en", "f:", "d:en:S0",
                                  "f:en:S7PxxZ1", "f:fr:S7", "f:S7", "k:pick:S7"])
async def test_stale_or_forged_callback_gets_a_short_answer(bot, data):
    await bot.press(6, data)
    answer = bot.request.sent("answerCallbackQuery")[-1].params
    assert answer.get("text") and len(answer["text"]) < 200
    assert not bot.request.sent("editMessageText")


async def test_message_not_modified_is_ignored(bot):
    await bot.send(7, "7B bf16")
    int4 = next(b for b in buttons(bot.replies(7)[-1]) if b["text"] == "INT4")
    bot.request.fail("editMessageText", 400, "Bad Request: message is not modified: specified new message content "
                     "and reply markup are exactly the same")
    await bot.press(7, int4["callback_data"])
    assert bot.request.sent("answerCallbackQuery")  # still answered, no error reported
    assert not [c for c in bot.request.calls if c.method == "sendMessage" and c.params["chat_id"] == ADMIN]


async def test_not_a_question_gets_help_with_three_example_buttons(bot):
    await bot.send(8, "hello 👋")
    reply = bot.replies(8)[-1]
    assert len(buttons(reply)) == 3 and all(b["callback_data"].startswith("x:") for b in buttons(reply))
    await bot.press(8, buttons(reply)[0]["callback_data"])
    assert "Memory needed" in bot.request.sent("editMessageText")[-1].params["text"]


async def test_named_card_answers_that_layout_first(bot):
    await bot.send(9, "can I run 70B on an RTX 4090?")
    text = bot.last_text(9)
    assert text.index("No") < text.index("Memory needed")
    assert "short by" in text and "Instead" in text


async def test_start_with_payload_answers_immediately_and_bad_payload_gets_help(bot):
    await bot.send(10, "/start Mllama-3_1-70bPi4C32k")
    assert "Llama 3.1 70B" in bot.last_text(10) and "INT4" in bot.last_text(10)
    await bot.send(10, "/start %%%garbage%%%")
    assert "Ask in your own words" in bot.last_text(10)


async def test_settings_set_and_used(bot):
    await bot.send(11, "/set precision int4")
    assert "Saved" in bot.last_text(11)
    await bot.send(11, "/set context 32k")
    await bot.send(11, "70B")
    text = bot.last_text(11)
    assert "INT4 (your setting)" in text and "32,768 tokens (your setting)" in text
    await bot.send(11, "/set lang de")
    await bot.send(11, "/settings")
    assert "Ihre Einstellungen" in bot.last_text(11)
    await bot.send(11, "/set batch zero")
    assert bot.last_text(11) == "zero ist kein gültiger Wert für batch. Erlaubt: 1 bis 4096."
    await bot.send(11, "/set colour red")
    assert "colour" in bot.last_text(11)


async def test_cards_card_and_compare(bot):
    await bot.send(12, "/cards")
    assert bot.last_text(12).count("•") == 15
    await bot.send(12, "/card A40")
    text = bot.last_text(12)
    assert "$5.00/GB-month" in text and "2.90 GB/s per $/month" in text
    await bot.send(12, "/card voodoo")
    assert "No card called voodoo" in bot.last_text(12)
    await bot.send(12, "/compare A40 RTX 4090")
    assert "question" in bot.last_text(12).lower() or "first" in bot.last_text(12)
    await bot.send(12, "70B int4")
    await bot.send(12, "/compare A40 RTX 4090")
    text = bot.last_text(12)
    assert "1x A40: fits" in text and "RTX 4090" in text


async def test_group_only_when_addressed(bot):
    await bot.send(13, "70B int4", chat_type="group", chat_id=-100)
    assert not bot.replies(-100)
    await bot.send(13, f"@{BOT_USERNAME} 70B int4", chat_type="group", chat_id=-100)
    assert "Memory needed" in bot.last_text(-100)
    await bot.send(13, "and 7B?", chat_type="group", chat_id=-100, reply_to_bot=True)
    assert bot.replies(-100)[-1]["text"] != bot.replies(-100)[-2]["text"]
    await bot.send(13, "/size 7B fp8", chat_type="group", chat_id=-100)
    assert "FP8" in bot.last_text(-100)


async def test_user_text_is_html_escaped(bot):
    await bot.send(14, "70B int4 <script>alert(1)</script> & <u>zzz</u>")
    text = bot.last_text(14)
    assert "Memory needed" in text
    assert set(re.findall(r"</?([a-z]+)", text)) <= {"b", "i", "code", "a", "pre"}  # only our own tags
    await bot.send(14, "/card <b>x</b>")
    assert "&lt;b&gt;x&lt;/b&gt;" in bot.last_text(14)


async def test_retry_after_is_honoured_and_delivered_once(bot):
    bot.request.fail("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1)
    await bot.send(15, "7B bf16")
    delivered = bot.replies(15)
    assert len(delivered) == 1
    assert [c.method for c in bot.request.calls if c.params.get("chat_id") == 15] == ["sendMessage!failed",
                                                                                        "sendMessage"]


async def test_network_errors_are_retried_with_backoff(bot):
    bot.request.fail("sendMessage", exception=network_error(), times=2)
    await bot.send(16, "7B bf16")
    assert len(bot.replies(16)) == 1


async def test_forbidden_marks_the_user_blocked(bot):
    bot.request.fail("sendMessage", 403, "Forbidden: bot was blocked by the user")
    await bot.send(17, "7B bf16")
    svc = bot.app.bot_data["services"]
    assert (await svc.store.get_preferences(17)).blocked
    await bot.send(17, "7B bf16")  # writing again clears it
    assert not (await svc.store.get_preferences(17)).blocked


async def test_unexpected_error_notifies_first_admin_and_tells_the_user(bot, monkeypatch):
    from bot.telegram.handlers import questions

    async def boom(*args, **kwargs):
        raise RuntimeError("kaputt <&>")

    monkeypatch.setattr(questions, "answer_question", boom)
    await bot.send(18, "7B")
    admin = [c.params for c in bot.request.sent("sendMessage") if c.params["chat_id"] == ADMIN]
    assert admin and "kaputt &lt;&amp;&gt;" in admin[-1]["text"] and TOKEN not in admin[-1]["text"]
    assert "went wrong" in bot.last_text(18)


async def test_flood_from_one_user_does_not_starve_others(bot):
    await asyncio.gather(*(bot.send(19, f"{n + 1}B bf16") for n in range(30)))
    await bot.send(20, "7B bf16")
    flooder = bot.replies(19)
    assert sum("faster than I can answer" in r["text"] for r in flooder) == 1
    assert len(flooder) == 8 + 1
    assert "Memory needed" in bot.last_text(20)


async def test_deep_links_with_a_payload_are_flood_limited_like_questions(bot):
    await bot.send(60, "70B int4")
    data = [b.get("callback_data", "") for b in buttons(bot.replies(60)[-1])]
    details = next(d for d in data if d.startswith("d:"))
    payload = details.split(":", 2)[2]
    for _ in range(QUESTIONS_PER_WINDOW + 3):
        await bot.send(61, f"/start {payload}")
    texts = [r["text"] for r in bot.replies(61)]
    assert sum("Memory needed" in text for text in texts) == QUESTIONS_PER_WINDOW
    assert sum(FLOOD_NOTICE in text for text in texts) == 1  # the polite notice once, then silence
    assert len(texts) == QUESTIONS_PER_WINDOW + 1


async def test_a_bare_start_does_not_use_the_question_budget(bot):
    for _ in range(QUESTIONS_PER_WINDOW + 3):
        await bot.send(62, "/start")
    texts = [r["text"] for r in bot.replies(62)]
    assert len(texts) == QUESTIONS_PER_WINDOW + 3 and not any(FLOOD_NOTICE in text for text in texts)
    await bot.send(62, "7B bf16")  # the question budget is untouched
    assert "Memory needed" in bot.last_text(62)


@pytest.mark.parametrize("command", ["/compare H100 A100", "/card H100", "/set coin BTC"])
async def test_every_command_with_words_is_flood_limited_like_a_question(bot, command):
    for _ in range(QUESTIONS_PER_WINDOW + 3):
        await bot.send(63, command)
    texts = [r["text"] for r in bot.replies(63)]
    assert sum(FLOOD_NOTICE in text for text in texts) == 1  # the polite notice once, then silence
    assert len(texts) == QUESTIONS_PER_WINDOW + 1


async def test_bare_commands_are_flood_limited_like_taps(bot):
    taps = 3 * QUESTIONS_PER_WINDOW  # flood.TAP_FACTOR x the questions'
    for _ in range(taps + 3):
        await bot.send(64, "/cards")
    texts = [r["text"] for r in bot.replies(64)]
    assert sum(FLOOD_NOTICE in text for text in texts) == 1 and len(texts) == taps + 1
    await bot.send(64, "7B bf16")  # the question budget is untouched
    assert "Memory needed" in bot.last_text(64)


async def test_restart_keeps_preferences_and_toggles_work(settings):
    async with Harness(settings) as first:
        await first.send(21, "/set coin XMR")
        await first.send(21, "70B int4")
        fp8 = next(b for b in buttons(first.replies(21)[-1]) if b["text"] == "FP8")
    async with Harness(settings) as second:
        await second.press(21, fp8["callback_data"])
        edit = second.request.sent("editMessageText")[-1].params
        assert "FP8" in edit["text"] and "coin=XMR" in " ".join(b.get("url", "") for b in buttons(edit))
        await second.send(21, "/compare A40 H100 SXM")  # the last question is now the FP8 one
        text = second.last_text(21)
        assert "<b>70B</b> · FP8" in text and "no FP8 hardware" in text and "1x H100 SXM: fits" in text


async def test_named_card_suggests_the_widest_precision_that_fits(bot):
    await bot.send(22, "can I run 13B on an RTX 4090?")
    text = bot.last_text(22)
    assert "No" in text and "In FP8 it needs 21.7 GB and fits on 1x RTX 4090 with 2.3 GB spare" in text
    await bot.send(22, "can I run 70B on an RTX 4090?")
    assert "💡" not in bot.last_text(22)  # even INT4 (39.7 GB) does not fit 24 GB: no false hope


async def test_layout_problems_are_in_the_users_language(bot):
    await bot.send(23, "Kann ich Llama 3.1 70B auf 3 H100 betreiben?", language_code="de")
    text = bot.last_text(23)
    assert "64 Attention-Köpfe lassen sich nicht auf 3 GPUs aufteilen" in text and "attention heads" not in text
    await bot.send(24, "full fine-tuning 405B")
    assert "more than one 8-GPU host, ask sales: 7,452 GB is about 5 nodes of 8x MI300X" in bot.last_text(24)


async def test_buttons_keep_the_language_of_their_message(bot):
    await bot.send(25, "Wie viel VRAM braucht Llama 3.1 70B in 4 Bit?", language_code="en")
    reply = bot.replies(25)[-1]
    assert "Benötigter Speicher" in reply["text"]
    fp8 = next(b for b in buttons(reply) if b["text"] == "FP8")
    await bot.press(25, fp8["callback_data"], language_code="en")
    assert "Benötigter Speicher" in bot.request.sent("editMessageText")[-1].params["text"]


async def test_group_chatter_and_bare_commands_do_not_count_against_the_question_limit(bot):
    for n in range(12):
        await bot.send(26, f"just chatting {n}", chat_type="group", chat_id=-300)
    for command in ("/start", "/help", "/settings", "/cards"):
        await bot.send(26, command)
    assert not [r for r in bot.replies(-300) if "faster than I can answer" in r["text"]]
    await bot.send(26, f"@{BOT_USERNAME} 7B", chat_type="group", chat_id=-300)
    assert "Memory needed" in bot.last_text(-300)


async def test_group_answers_carry_no_personal_ref(bot):
    await bot.send(27, f"@{BOT_USERNAME} 70B int4", chat_type="group", chat_id=-301)
    reply = bot.replies(-301)[-1]
    assert "&amp;ref=" not in reply["text"] and all("ref=" not in b.get("url", "") for b in buttons(reply))
    await bot.send(27, "70B int4")  # in private it does
    assert "&amp;ref=" in bot.last_text(27)


async def test_set_region_accepts_the_region_name(bot):
    await bot.send(28, "/set region Dallas")
    assert "Saved: region = <b>DFW-1</b>" in bot.last_text(28)


async def test_settings_are_not_shown_to_a_group(bot):
    await bot.send(29, "/set coin XMR")
    await bot.send(29, "/settings", chat_type="group", chat_id=-302)
    assert "private chat" in bot.last_text(-302) and "XMR" not in bot.last_text(-302)


async def test_a_named_format_is_sized_and_a_precision_toggle_replaces_it(bot):
    # "Q4_K_M" is its real 42.2 GB of weights, and the BF16 button sizes BF16, not Q4_K_M again
    await bot.send(5, "Llama 3.1 70B Q4_K_M")
    reply = bot.replies(5)[-1]
    assert "Q4_K_M" in reply["text"] and "42.2 GB" in reply["text"]
    assert not any(b["text"].startswith("✓") and b["text"] in ("✓ INT4", "✓ BF16") for b in buttons(reply))
    bf16 = next(b for b in buttons(reply) if b["text"] == "BF16")
    await bot.press(5, bf16["callback_data"])
    edit = bot.request.sent("editMessageText")[-1].params
    assert "140.0 GB" in edit["text"] and "Q4_K_M" not in edit["text"].splitlines()[0]


@pytest.mark.parametrize("failure", ["lost", "too old"])
async def test_a_failed_tap_answer_still_edits_and_sends_no_apology(bot, failure):
    """answerCallbackQuery only stops the spinner: when it fails (its answer lost after it was written, or the
    query too old), the toggle's edit still happens, and the user gets no "could not send" for it."""
    from tests.support.botharness import lost_response

    await bot.send(7, "70B at 4-bit, 32k context")
    fp8 = next(b for b in buttons(bot.replies(7)[-1]) if b["text"] == "FP8")
    replies_before = len(bot.replies(7))
    if failure == "lost":
        bot.request.fail("answerCallbackQuery", exception=lost_response())
    else:
        bot.request.fail("answerCallbackQuery", 400, "Bad Request: query is too old and response timeout expired "
                                                     "or query ID is invalid")
    await bot.press(7, fp8["callback_data"])
    assert bot.request.sent("answerCallbackQuery!failed")
    edit = bot.request.sent("editMessageText")[-1].params
    assert "FP8" in edit["text"] and "✓ FP8" in [b["text"] for b in buttons(edit)]
    assert len(bot.replies(7)) == replies_before  # no apology


async def test_a_failed_tap_answer_still_sends_the_chart(bot):
    from tests.support.botharness import lost_response

    await bot.send(8, "70B at 4-bit, 32k context")
    chart = next(b for b in buttons(bot.replies(8)[-1]) if "Chart" in b["text"])
    bot.request.fail("answerCallbackQuery", exception=lost_response())
    await bot.press(8, chart["callback_data"])
    assert bot.request.sent("answerCallbackQuery!failed") and bot.request.sent("sendPhoto")
