"""What customers ask for: an anonymous record per answered question through the real bot, on both engines; the
report's figures from a seeded week; retention; /demand for admins only, in private chats only; `cardfit demand`."""
from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from bot import metrics
from bot.config import load_settings
from bot.features.demand import (
    CSV_HEADER,
    DemandReport,
    csv_rows,
    demand_record,
    demand_report,
    prune_demand,
    render_png,
    render_report,
    unmet_of,
)
from bot.store import DemandRecord, Store
from bot.store.demand import COLUMNS
from catalog.loader import load_catalog
from engine.notes import Note
from engine.parse import Vocabulary
from tests.support.botharness import TOKEN, Harness

ROOT = Path(__file__).resolve().parents[1]
CUSTOMER = 4_242_424_242  # an id no class or price could equal by chance
ADMIN = 9_100
GROUP = -100_777
# Every column a record has; a new column must be added here, after checking it holds nothing personal.
EXPECTED_COLUMNS = {"id", "day", "catalog_id", "language", "intent", "model", "size_class", "format", "context_class",
                    "concurrency_class", "workload", "card", "card_count", "monthly_usd", "hourly_usd", "rule_card",
                    "rule_count", "unmet", "unmet_card"}


def settings_for(db: str, **overrides):
    return load_settings(bot_token=TOKEN, db=db, admin_ids=str(ADMIN), rate_limit_messages=50, **overrides)


async def rows(db: str) -> list[dict]:
    store = await Store.open(db)
    try:
        found = await store._database.fetch("SELECT * FROM demand ORDER BY id")
        return [{key: row[key] for key in row.keys()} for row in found]
    finally:
        await store.close()


async def test_every_answer_leaves_one_record_that_holds_nothing_personal(db_target):
    questions = ["Llama 3.1 70B at 4-bit, 32k context, my project zebra-17", "1000B bf16",
                 "Qwen2.5 72B AWQ for 32 users"]
    async with Harness(settings_for(db_target)) as bot:
        for question in questions:
            await bot.send(CUSTOMER, question)
        await bot.send(CUSTOMER, "hello there")  # not a question: no record
        await bot.send(CUSTOMER, "und in fp8?", language_code="de")  # a follow-up is a question of its own
    kept = await rows(db_target)
    assert len(kept) == 4
    assert set(kept[0]) == EXPECTED_COLUMNS
    today = dt.datetime.now(dt.UTC).date()
    for row in kept:
        for column, value in row.items():
            assert value != CUSTOMER and str(CUSTOMER) not in str(value), column
            assert "zebra" not in str(value) and "project" not in str(value), column
            if isinstance(value, str) and column != "day":
                assert len(value) <= 40, (column, value)  # a class or a catalog name, never a sentence
        assert row["day"] in (today.isoformat(), (today - dt.timedelta(days=1)).isoformat())  # midnight between
    first, cluster, awq, followup = kept
    assert (first["model"], first["size_class"], first["format"], first["context_class"],
            first["concurrency_class"], first["workload"], first["language"], first["intent"]) == \
        ("llama-3.1-70b", None, "int4", "<=32k", "1", "inference", "en", "size")
    assert first["card"] and first["card_count"] >= 1 and first["monthly_usd"] > 0 and first["unmet"] is None
    assert (cluster["model"], cluster["size_class"], cluster["card"], cluster["unmet"], cluster["unmet_card"]) == \
        (None, ">=300B", None, "memory", "mi300x")
    assert (awq["model"], awq["format"], awq["concurrency_class"]) == ("qwen2.5-72b", "awq", "9-32")
    assert (followup["model"], followup["format"], followup["language"]) == ("qwen2.5-72b", "fp8", "de")


async def test_buttons_and_quote_are_recorded_and_inline_is_not(tmp_path):
    db = str(tmp_path / "cardfit.sqlite3")
    async with Harness(settings_for(db, staff_ids=str(CUSTOMER))) as bot:
        await bot.send(CUSTOMER, "70B int4")
        markup = bot.replies(CUSTOMER)[-1]["reply_markup"]["inline_keyboard"]
        toggle = next(b["callback_data"] for row in markup for b in row if "callback_data" in b
                      and "FP8" in b["text"])
        await bot.press(CUSTOMER, toggle)
        await bot.send(CUSTOMER, "/quote 8B bf16")
        await bot.inline(CUSTOMER, "70B int4")  # every keystroke of an inline query: not a question answered
    assert [(row["size_class"], row["format"]) for row in await rows(db)] == \
        [("40-100B", "int4"), ("40-100B", "fp8"), ("<10B", "bf16")]


async def test_demand_off_keeps_nothing(tmp_path):
    db = str(tmp_path / "cardfit.sqlite3")
    async with Harness(settings_for(db, demand=False)) as bot:
        await bot.send(CUSTOMER, "70B int4")
        assert "Memory needed" in bot.last_text(CUSTOMER)
    assert await rows(db) == []


async def test_a_store_that_fails_to_record_never_breaks_the_answer(tmp_path, monkeypatch):
    from bot.store.demand import DemandRepository

    async def broken(self, record):
        raise OSError("disk full")

    monkeypatch.setattr(DemandRepository, "keep_demand", broken)
    failed = metrics.DEMAND_RECORDS.labels("failed")._value.get()
    async with Harness(settings_for(str(tmp_path / "cardfit.sqlite3"))) as bot:
        await bot.send(CUSTOMER, "70B int4")
        assert "Memory needed" in bot.last_text(CUSTOMER)
    assert metrics.DEMAND_RECORDS.labels("failed")._value.get() == failed + 1


async def test_a_speed_target_no_layout_meets_is_kept_as_unmet_speed(tmp_path):
    db = str(tmp_path / "cardfit.sqlite3")
    async with Harness(settings_for(db)) as bot:
        await bot.send(CUSTOMER, "llama 3.1 70b bf16 at least 500 tok/s")
        await bot.send(CUSTOMER, "Llama 3.1 70B BF16 mindestens 500 Token/s", language_code="de")
    kept = await rows(db)
    assert [(row["unmet"], row["unmet_card"], row["language"]) for row in kept] == \
        [("speed", "b200", "en"), ("speed", "b200", "de")]
    store = await Store.open(db)
    try:
        report = await demand_report(store, dt.datetime.now(dt.UTC).date())
    finally:
        await store.close()
    assert ("speed", "b200", 2) in report.now.unmet


# -- classification --------------------------------------------------------------------------------------------

def _answer(question: str, catalog: str = "gpurenthub"):
    from bot.features.ask import ask_blocking

    loaded = load_catalog(catalog).catalog
    return ask_blocking(question, loaded, Vocabulary.of_catalog(loaded)).answer


@pytest.mark.parametrize(("question", "unmet", "card"), [
    ("70B int4", None, None),
    ("1000B bf16", "memory", "mi300x"),  # more than one host: the biggest node is named
    ("llama 3.1 70b fp8 on A100", "fp8", "a100-sxm"),  # the named card lacks FP8 hardware
    ("70B int4 under $100/month", "budget", "a40"),
    ("llama 3.1 70b bf16 at least 500 tok/s", "speed", "b200"),  # no layout reaches it: the fastest one's card
    ("70B int4 for 20 users at 15 tok/s each", None, None),  # met: served
    ("llama 3.1 8b at 80 tok/s on rtx 3090", None, None),  # the user's own card, too slow: the user's choice
])
def test_why_a_question_went_unserved(question, unmet, card):
    assert unmet_of(_answer(question)) == (unmet, card)


def test_a_layout_ruled_out_by_stock_or_region_names_that_card():
    catalog = load_catalog("gpurenthub").catalog
    stock = Note("only 2 H100 SXM free in DFW-1", "stock", free=2, card="H100 SXM", region="DFW-1")
    region = Note("MI300X is not offered in PDX-1", "region", card="MI300X", region="PDX-1")
    for problems, expected in (([stock, region], ("stock", "h100-sxm")), ([region], ("region", "mi300x"))):
        reason = Note("no usable layout", "unusable", problems=problems)
        answer = SimpleNamespace(selection=SimpleNamespace(fit=None, reason=reason), capacity_layout=None,
                                 catalog=catalog)
        assert unmet_of(answer) == expected


def test_the_rules_pick_is_kept_only_when_it_differs():
    differs = demand_record(_answer("70B at 4-bit, 32k context"), "en", "2026-12-01")
    assert differs is not None and (differs.card, differs.card_count, differs.rule_card, differs.rule_count) == \
        ("a40", 2, "a40", 1)
    same = demand_record(_answer("70B int4"), "en", "2026-12-01")
    assert same is not None and same.rule_card is None and same.rule_count is None


# -- the report -------------------------------------------------------------------------------------------------

TODAY = dt.date(2026, 12, 5)


def rec(days_ago: int, *, model: str | None = "llama-3.1-70b", size_class: str | None = None, fmt: str = "int4",
        card: str | None = "h100-sxm", count: int = 1, monthly: float | None = 1_000.0, rule: str | None = None,
        unmet: str | None = None, unmet_card: str | None = None) -> DemandRecord:
    return DemandRecord((TODAY - dt.timedelta(days=days_ago)).isoformat(), "gpurenthub", "en", "size", model,
                        size_class, fmt, "<=8k", "1", "inference", card, count if card else None, monthly,
                        monthly / 720 if monthly else None, rule, 1 if rule else None, unmet, unmet_card)


SEEDED_WEEK = [
    # this week (days 0-6): 8 answers
    rec(0), rec(1), rec(2, rule="a40"),  # 3x llama 70B int4 on 1x H100 (one where the rule picked an A40)
    rec(3, model="qwen2.5-72b", fmt="fp8", card="h200-sxm", monthly=2_000.0),
    rec(4, model="qwen2.5-72b", fmt="fp8", card="h200-sxm", count=2, monthly=3_800.0, rule="h100-sxm"),
    rec(5, model=None, size_class=">=300B", fmt="bf16", card=None, monthly=None, unmet="memory",
        unmet_card="mi300x"),
    rec(6, model="llama-3.1-8b", fmt="fp8", card="rtx-6000-ada", monthly=500.0, unmet="fp8", unmet_card="a100-sxm"),
    rec(6, model="llama-3.1-8b", fmt="fp8", card="a40", monthly=240.0, unmet="budget", unmet_card="a40"),
    # last week (days 7-13): 3 answers
    rec(7), rec(9, model="qwen2.5-72b", fmt="fp8", card="h200-sxm", monthly=2_000.0),
    rec(13, model=None, size_class=">=300B", fmt="bf16", card=None, monthly=None, unmet="memory",
        unmet_card="mi300x"),
    # older: outside both weeks
    rec(14), rec(30),
]


async def seeded(store) -> None:
    for record in SEEDED_WEEK:
        await store.keep_demand(record)


async def test_the_reports_figures_from_a_seeded_week(store):
    await seeded(store)
    report = await demand_report(store, TODAY, catalog=load_catalog("gpurenthub").catalog)
    now, before = report.now, report.before
    assert (now.first_day, now.last_day, before.first_day, before.last_day) == \
        ("2026-11-29", "2026-12-05", "2026-11-22", "2026-11-28")
    assert (now.answers, before.answers) == (8, 3)
    assert now.models == [("llama-3.1-70b", 3), ("llama-3.1-8b", 2), ("qwen2.5-72b", 2), (">=300B", 1)]
    assert now.formats == [("fp8", 4), ("int4", 3), ("bf16", 1)]
    assert now.cards == [("h100-sxm", 1, 3, 3_000.0), ("h200-sxm", 2, 1, 3_800.0), ("h200-sxm", 1, 1, 2_000.0),
                         ("rtx-6000-ada", 1, 1, 500.0), ("a40", 1, 1, 240.0)]
    assert now.revenue_usd == pytest.approx(9_540.0)
    assert now.unmet == [("budget", "a40", 1), ("fp8", "a100-sxm", 1), ("memory", "mi300x", 1)]
    assert (now.with_layout, now.disagreements) == (7, 2)
    assert now.disagreement_share == pytest.approx(2 / 7)
    assert before.models == [(">=300B", 1), ("llama-3.1-70b", 1), ("qwen2.5-72b", 1)]  # ties by name
    assert before.disagreement_share == 0.0

    english = render_report(report, "en")
    assert "Answers: 8 (before: 3)" in english
    assert "• Llama 3.1 70B: 3 (before: 1)" in english  # models by name, as the answers name them
    assert "• &gt;=300B: 1 (before: 1)" in english  # a size class stays as it is (escaped: the chat is HTML)
    assert "llama-3.1-70b" not in english
    assert "• 1x H100 SXM: 3, $3,000/month (before: 1)" in english  # cards by name, as every other reply
    assert "• no FP8 hardware – A100 SXM: 1 (before: 0)" in english
    assert "• no fit – MI300X: 1 (before: 1)" in english
    assert "h100-sxm" not in english and "a40" not in english
    assert "disagree on 29% of answers with a layout (2 of 7; before: 0%)" in english
    german = render_report(report, "de")
    assert "Antworten: 8 (davor: 3)" in german and "keine FP8-Hardware – A100 SXM: 1" in german
    assert "29 %" in german
    assert render_png(report, "en").startswith(b"\x89PNG")
    # A card no longer in the catalog in service is shown by its id.
    gone = DemandReport(report.now, report.before, {k: v for k, v in report.names.items() if k != "a40"})
    assert "• over budget – a40: 1 (before: 0)" in render_report(gone, "en")
    assert render_png(gone, "en").startswith(b"\x89PNG")

    rows_ = csv_rows(report)  # CSV and JSON keep the ids
    assert rows_[0] == CSV_HEADER
    assert ("period", "2026-11-29", "2026-12-05", "card", "h100-sxm", 1, 3, 3_000.0) in rows_
    assert ("previous", "2026-11-22", "2026-11-28", "answers", "", "", 3, "") in rows_


async def test_an_empty_period_reports_none(store):
    report = await demand_report(store, TODAY)
    assert report.now.answers == 0 and report.now.disagreement_share is None
    assert "• none" in render_report(report, "en")
    assert render_png(report, "de").startswith(b"\x89PNG")


async def test_retention_prunes_records_past_their_days(store):
    for days_ago in (0, 179, 180, 181, 400):
        await store.keep_demand(rec(days_ago))
    assert await prune_demand(store, 180, TODAY) == 3 - 0  # 180, 181 and 400 days ago: past 180 days kept
    kept = await store.demand_records("2000-01-01", TODAY.isoformat())
    assert sorted(record.day for record in kept) == [(TODAY - dt.timedelta(days=d)).isoformat() for d in (179, 0)]
    assert await prune_demand(store, 180, TODAY) == 0  # a second run (another replica) finds nothing


def test_every_record_field_is_a_column():
    assert set(COLUMNS) | {"id"} == EXPECTED_COLUMNS


# -- /demand ----------------------------------------------------------------------------------------------------

async def test_demand_is_for_admins_in_private_chats(db_target):
    async with Harness(settings_for(db_target)) as bot:
        await bot.send(CUSTOMER, "70B int4")
        await bot.send(CUSTOMER, "/demand")
        assert bot.last_text(CUSTOMER) == "This is for admins only."
        await bot.send(ADMIN, "/demand", chat_type="supergroup", chat_id=GROUP)
        assert "private chat" in bot.last_text(GROUP)
        assert not bot.request.sent("sendPhoto")
        await bot.send(ADMIN, "/demand")
        text = bot.last_text(ADMIN)
        assert "Demand" in text and "Answers: 1 (before: 0)" in text and "• 40-100B: 1 (before: 0)" in text
        names = {card.name for card in load_catalog("gpurenthub").catalog.cards}
        assert any(f"• 1x {name}: 1," in text or f"• 2x {name}: 1," in text for name in names), text  # by name
        photos = bot.request.sent("sendPhoto")
        assert len(photos) == 1 and photos[0].params["chat_id"] == ADMIN
        assert photos[0].params["photo"].startswith(b"\x89PNG")
        await bot.send(ADMIN, "/demand", language_code="de")
        assert "Antworten: 1 (davor: 0)" in bot.last_text(ADMIN)


async def test_the_demand_command_is_on_the_admins_menu_only(tmp_path):
    async with Harness(settings_for(str(tmp_path / "cardfit.sqlite3"))) as bot:
        menus = bot.request.sent("setMyCommands")
        admin = [c for c in menus if (c.params.get("scope") or {}).get("chat_id") == ADMIN]
        others = [c for c in menus if (c.params.get("scope") or {}).get("type") == "default"]
        assert all(any(cmd["command"] == "demand" for cmd in c.params["commands"]) for c in admin) and admin
        assert not any(cmd["command"] == "demand" for c in others for cmd in c.params["commands"])


# -- cardfit demand -------------------------------------------------------------------------------------------

def test_cardfit_demand_text_json_csv(tmp_path):
    import asyncio

    db = tmp_path / "cardfit.sqlite3"
    today = dt.datetime.now(dt.UTC).date()

    async def seed() -> None:
        store = await Store.open(db)
        try:
            for record in SEEDED_WEEK:
                shift = (today - TODAY).days
                day = (dt.date.fromisoformat(record.day) + dt.timedelta(days=shift)).isoformat()
                await store.keep_demand(DemandRecord(day, *[getattr(record, c) for c in COLUMNS[1:]]))
        finally:
            await store.close()

    asyncio.run(seed())
    env = {"PATH": "/usr/bin:/bin", "CARDFIT_DB": str(db), "HF_HUB_OFFLINE": "1"}

    def cardfit(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "bot.cli", "demand", *argv], capture_output=True, text=True,
                              cwd=ROOT, env=env, timeout=120)

    as_json = cardfit("--since", "30d", "--json")
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    assert data["period"]["answers"] == 12 and data["previous"]["answers"] == 1  # 30 days ago: the span before
    assert data["period"]["models"][0] == {"model": "llama-3.1-70b", "answers": 5}
    week = json.loads(cardfit("--json").stdout)
    assert (week["period"]["answers"], week["previous"]["answers"]) == (8, 3)
    as_csv = cardfit("--since", "1w", "--csv").stdout.splitlines()
    assert as_csv[0] == ",".join(CSV_HEADER) and any(line.endswith("card,h100-sxm,1,3,3000.0") for line in as_csv)
    text = cardfit("--since", "2w").stdout
    assert "Answers: 11 (before: 1)" in text and "<b>" not in text
    assert "• 1x H100 SXM: " in text and "h100-sxm" not in text
    refused = cardfit("--since", "soon")
    assert refused.returncode == 2 and "30d" in refused.stderr


async def test_the_retention_job_prunes_with_the_configured_days(tmp_path):
    from bot.telegram.app import _prune_demand

    async with Harness(settings_for(str(tmp_path / "cardfit.sqlite3"), demand_retention_days=30)) as bot:
        store = bot.app.bot_data["services"].store
        today = dt.datetime.now(dt.UTC).date()
        for days_ago in (0, 29, 30, 90):
            day = (today - dt.timedelta(days=days_ago)).isoformat()
            await store.keep_demand(DemandRecord(day, *[getattr(rec(0), c) for c in COLUMNS[1:]]))
        assert [job.name for job in bot.app.job_queue.jobs() if job.name == "demand-prune"] == ["demand-prune"]
        await _prune_demand(SimpleNamespace(application=bot.app, core=bot.app.bot_data["services"].core))
        kept = await store.demand_records("2000-01-01", today.isoformat())
        assert sorted(record.day for record in kept) == \
            [(today - dt.timedelta(days=d)).isoformat() for d in (29, 0)]


def write_readme_chart(path: Path = ROOT / "docs" / "demand-chart.png") -> None:
    """README's /demand chart: the seeded week, the cards by their names in the bundled catalog
    (`python -m tests.test_demand`)."""
    import asyncio
    import tempfile

    async def draw() -> bytes:
        with tempfile.TemporaryDirectory() as folder:
            store = await Store.open(Path(folder) / "cardfit.sqlite3")
            try:
                await seeded(store)
                report = await demand_report(store, TODAY, catalog=load_catalog("gpurenthub").catalog)
            finally:
                await store.close()
        return render_png(report, "en")

    path.write_bytes(asyncio.run(draw()))


if __name__ == "__main__":
    write_readme_chart()
