"""The answer's chart: its data without matplotlib, its PNG with it, the button in Telegram, the
terminal chat and the CLI, and a cold start that never imports matplotlib."""
from __future__ import annotations

import io
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli.chat import run_chat
from bot.cli.main import main
from bot.config import load_settings
from bot.features.callbacks import CALLBACK_LIMIT, ChartButton
from bot.features.chart import ChartData, chart_data, chart_path, render_png
from bot.features.reply import Button
from bot.texts.i18n import t
from catalog.loader import load_catalog
from engine.answer.build import Answer, build_answer
from engine.sizing.payload import encode_request
from engine.sizing.rule import SizeRequest
from tests.support.botharness import TOKEN, Harness, buttons

ROOT = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
GPURENTHUB = load_catalog("gpurenthub").catalog


def answer_for(**fields: object) -> Answer:
    return build_answer(SizeRequest(**fields), GPURENTHUB)  # type: ignore[arg-type]


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == PNG_SIGNATURE and png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    return width, height


# -- data (pure: no matplotlib) --------------------------------------------------------------------------------

def test_single_card_answer_stacks_the_components_beside_the_fit_and_alternatives():
    answer = answer_for(model="llama-3.1-70b", precision="int4")
    data = chart_data(answer, "en")
    # vLLM starts on the rule's 1x A40, which leads; 1x RTX A6000 is an alternative; the 2x RTX 3090 is drawn per GPU
    single, pair = data.groups
    assert [bar.label.split("\n")[0] for bar in pair.bars[1:]] == ["2x RTX 3090"]
    group = single
    need, *capacities = group.bars
    assert [bar.label.split("\n")[0] for bar in capacities] == ["1x A40", "1x RTX A6000"]
    requirement = answer.requirement
    assert requirement is not None
    assert need.need and [s.key for s in need.segments] == [c.name for c in requirement.components]
    assert need.total_gb == pytest.approx(requirement.total_gb) == pytest.approx(group.need_gb)
    assert [s.label for s in need.segments] == ["weights", "KV cache", "overhead"]
    assert capacities[0].label.startswith("1x A40") and capacities[0].chosen and capacities[0].holds
    assert capacities[0].total_gb == 48 and capacities[0].value == "48 GB"
    assert all(not bar.chosen for bar in capacities[1:])
    assert data.title.startswith("Llama 3.1 70B · INT4")


def test_a_set_is_drawn_per_gpu():
    answer = answer_for(params_b=70, precision="bf16")
    data = chart_data(answer, "en")
    titles = [group.title for group in data.groups]
    assert titles[0] == "one card" and "4 cards, per GPU" in titles
    four = data.groups[titles.index("4 cards, per GPU")]
    need, a40 = four.bars
    layout = next(x for x in answer.selection.alternatives if x.count == 4)  # type: ignore[union-attr]
    assert layout.per_gpu is not None
    assert need.total_gb == pytest.approx(layout.per_gpu.total_gb)
    assert [s.key for s in need.segments] == ["weights", "kv_cache", "other"]
    assert a40.total_gb == layout.card.vram_gb  # one card's memory, not the set's
    assert a40.label.startswith("4x A40")


def test_german_labels_and_caption_with_the_key_numbers():
    answer = answer_for(model="llama-3.1-70b", precision="int4")
    data = chart_data(answer, "de")
    need = data.groups[0].bars[0]
    assert [s.label for s in need.segments] == ["Gewichte", "KV-Cache", "Overhead"]
    assert data.y_label == "Speicher (GB, dezimal)"
    assert data.caption.splitlines() == [
        "Llama 3.1 70B · INT4 · 8.192 Token · Batch 1 · Inferenz",
        "Bedarf: 39,7 GB",
        "Passt: 1x A40 (48 GB), 8,3 GB Reserve · 0,33 $/Stunde, 240 $/Monat",
    ]
    assert chart_data(answer, "en").caption.splitlines()[1:] == [
        "Need: 39.7 GB", "Fit: 1x A40 (48 GB), 8.3 GB spare · $0.33/hour, $240/month"]


def test_a_named_layout_that_does_not_hold_it_is_grey_and_said_in_the_caption():
    answer = answer_for(params_b=70, precision="bf16", card="h100", gpu_count=1)
    data = chart_data(answer, "en")
    bars = {bar.label.split("\n")[0]: bar for bar in data.bars if not bar.need}
    assert not bars["1x H100 SXM"].holds and not bars["1x H100 SXM"].chosen
    assert bars["1x MI300X"].chosen and bars["1x MI300X"].holds
    assert "1x H100 SXM (80 GB) does not hold it" in data.caption
    assert "Fit: 1x MI300X (192 GB)" in data.caption


def test_nothing_fits_still_draws_the_need():
    answer = answer_for(params_b=5000, precision="bf16")
    assert answer.payable is None
    data = chart_data(answer, "en")
    assert data.groups[0].bars[0].need
    assert data.caption.endswith("Nothing in the catalog holds it")


def test_usable_memory_is_drawn_only_when_given():
    answer = answer_for(model="llama-3.1-70b", precision="int4")
    answer.review = None  # an answer without a serving check (training, unknown KV shape)
    assert all(bar.usable_gb is None for bar in chart_data(answer, "en").bars)
    data = chart_data(answer, "en", usable_gb_per_gpu={("rtx-a6000", 1): 43.1})
    [a40] = [bar for bar in data.bars if bar.label.startswith("1x RTX A6000")]
    assert a40.usable_gb == 43.1
    assert sum(bar.usable_gb is not None for bar in data.bars) == 1


def test_the_answers_own_serving_check_is_read_when_it_carries_one():
    served = answer_for(model="llama-3.1-70b", precision="int4")
    assert served.serving is not None  # the real check (engine/serving/review.py) is drawn on the fit's bar only
    drawn = [bar.usable_gb for bar in chart_data(served, "en").bars if bar.usable_gb is not None]
    assert drawn == [pytest.approx(served.serving.usable_gb_per_gpu)]
    assert [bar.usable_gb for bar in chart_data(served, "en").bars if bar.chosen] == drawn


def test_a_price_answer_has_no_chart():
    answer = build_answer(SizeRequest(card="h100", intent="price"), GPURENTHUB)
    with pytest.raises(ValueError):
        chart_data(answer, "en")


def test_chart_path_is_stable_per_chart(tmp_path):
    data = chart_data(answer_for(model="llama-3.1-70b", precision="int4"), "en")
    assert chart_path(tmp_path, data) == chart_path(tmp_path, data)
    other = chart_data(answer_for(model="llama-3.1-70b", precision="int4"), "de")
    assert chart_path(tmp_path, data) != chart_path(tmp_path, other)


# -- rendering ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fields", [dict(model="llama-3.1-70b", precision="int4"),
                                    dict(params_b=70, precision="bf16", card="h100", gpu_count=1),
                                    dict(params_b=5000, precision="bf16")])
def test_render_png_gives_a_valid_png_of_reasonable_size(fields):
    data = chart_data(answer_for(**fields), "de")
    png = render_png(data)
    width, height = png_size(png)
    assert 800 <= width <= 2000 and height == (840 if data.speed is not None else 480)  # the speed panel: 3.6 in
    assert 5_000 < len(png) < 150_000
    from PIL import Image  # matplotlib's own dependency: the PNG decodes, not just its header

    image = Image.open(io.BytesIO(png))
    image.load()
    assert image.size == (width, height)


def test_render_png_draws_the_usable_line():
    answer = answer_for(model="llama-3.1-70b", precision="int4")
    plain_png = render_png(chart_data(answer, "en"))
    with_line = render_png(chart_data(answer, "en", usable_gb_per_gpu={("a40", 1): 43.1}))
    assert plain_png != with_line


def test_renders_in_parallel_threads_give_the_same_png():
    from concurrent.futures import ThreadPoolExecutor

    datas = [chart_data(answer_for(model="llama-3.1-70b", precision="int4"), lang) for lang in ("en", "de")] * 3
    alone = [render_png(data) for data in datas[:2]]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(render_png, datas))
    assert together == alone * 3


# -- cold start -------------------------------------------------------------------------------------------------

def test_cli_ask_and_the_bots_modules_never_import_matplotlib():
    code = ("import sys, io, contextlib\n"
            "import bot.cli.main, bot.telegram.app, bot.cli.chat, bot.features.chart\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert bot.cli.main.main(['ask', '70B int4']) == 0\n"
            "    assert bot.cli.main.main(['size', '--params', '70']) == 0\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'PIL', 'numpy')))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


# -- callback data ----------------------------------------------------------------------------------------------

def test_chart_button_round_trips_and_rejects_forgeries():
    button = ChartButton("de", "abc123")
    assert button.encode() == "c:de:abc123"
    assert ChartButton.decode(button.encode()) == button
    for forged in ("c:fr:abc", "c:en:", "c:", "c::abc", "c:en:" + "x" * CALLBACK_LIMIT, None, 42, "f:en:abc"):
        assert ChartButton.decode(forged) is None
    assert ChartButton.matches("c:xx:whatever") and not ChartButton.matches("f:en:abc")


# -- Telegram ---------------------------------------------------------------------------------------------------

@pytest.fixture
async def bot(tmp_path):
    settings = load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), rate_limit_messages=50,
                             rate_limit_window_s=60)
    async with Harness(settings) as harness:
        yield harness


@pytest.mark.parametrize(("text", "language_code", "label"), [("70B at 4-bit, 32k context", "en", "📊 Chart"),
                                                             ("Llama 3.1 70B in 4 Bit", "de", "📊 Diagramm")])
async def test_chart_button_sends_a_photo_with_the_caption(bot, text, language_code, label):
    await bot.send(7, text, language_code=language_code)
    chart = next(b for b in buttons(bot.replies(7)[-1]) if b["text"] == label)
    assert chart["callback_data"].startswith(f"c:{language_code}:")
    assert len(chart["callback_data"].encode()) <= CALLBACK_LIMIT
    await bot.press(7, chart["callback_data"], language_code=language_code)
    [answered] = bot.request.sent("answerCallbackQuery")
    assert "text" not in answered.params
    [photo] = bot.request.sent("sendPhoto")
    assert photo.params["chat_id"] == 7 and photo.params["parse_mode"] == "HTML"
    assert png_size(photo.params["photo"])[1] == 840  # the memory panel and the speed panel under it
    caption = photo.params["caption"]
    assert ("Need: 47.7 GB" if language_code == "en" else "Bedarf: ") in caption
    assert ("2x A40" if language_code == "en" else "1x A40") in caption  # what vLLM starts on
    assert not bot.request.sent("editMessageText")  # the answer stays as it was


async def test_forged_chart_data_gets_the_stale_notice(bot):
    await bot.press(8, "c:en:not-a-payload")
    await bot.press(8, "c:zz:whatever")
    notices = [c.params.get("text") for c in bot.request.sent("answerCallbackQuery")]
    assert notices == [t("en", "error.stale")] * 2
    assert not bot.request.sent("sendPhoto")


async def test_a_blocked_user_is_marked_and_a_bad_request_is_logged(bot, caplog):
    payload = encode_request(SizeRequest(model="llama-3.1-70b", precision="int4"))
    bot.request.fail("sendPhoto", 403, "Forbidden: bot was blocked by the user")
    await bot.press(9, ChartButton("en", payload).encode())
    store = bot.app.bot_data["services"].store
    assert (await store.get_preferences(9)).blocked
    bot.request.fail("sendPhoto", 400, "Bad Request: PHOTO_INVALID_DIMENSIONS")
    await bot.press(10, ChartButton("en", payload).encode())
    assert "photo_invalid_dimensions" in caplog.text.lower()  # logged by the global error handler
    assert not bot.replies(10)  # a Telegram error is not the user's to read
    assert [c.method for c in bot.request.calls if c.method.startswith("sendPhoto")] == ["sendPhoto!failed"] * 2


async def test_caption_is_html_escaped(bot, monkeypatch):
    import bot.features.chart as chart_module

    real = chart_module.chart_caption
    monkeypatch.setattr(chart_module, "chart_caption", lambda answer, lang: real(answer, lang) + " <b>&")
    payload = encode_request(SizeRequest(model="llama-3.1-70b", precision="int4"))
    await bot.press(11, ChartButton("en", payload).encode())
    [photo] = bot.request.sent("sendPhoto")
    assert photo.params["caption"].endswith(" &lt;b&gt;&amp;")


# -- terminal chat and CLI --------------------------------------------------------------------------------------

def chart_number(out: str) -> str:
    line = next(line for line in out.splitlines() if "📊 Chart" in line)
    return line.split("] 📊 Chart")[0].rsplit("[", 1)[1]


async def test_terminal_chat_writes_the_chart_and_prints_its_path(tmp_path):
    charts = tmp_path / "charts"
    settings = load_settings(db=str(tmp_path / "chat.sqlite3"), chart_dir=str(charts))
    first = io.StringIO()
    await run_chat(settings, io.StringIO("70B int4\n"), first)
    number = chart_number(first.getvalue())
    stdout = io.StringIO()
    await run_chat(settings, io.StringIO(f"70B int4\n{number}\n"), stdout)
    [written] = list(charts.glob("chart-*.png"))
    assert f"📊 Chart saved: {written}" in stdout.getvalue()
    assert "Need: 39.7 GB" in stdout.getvalue()
    assert png_size(written.read_bytes())[1] == 840


async def test_terminal_chat_says_when_the_chart_cannot_be_written(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    settings = load_settings(db=str(tmp_path / "chat.sqlite3"), chart_dir=str(blocker))
    from bot.cli.chat import dispatch
    from bot.features.caller import UserInfo
    from bot.features.core import CatalogHolder, Core
    from bot.store import Store

    store = await Store.open(settings.db)
    try:
        core = Core(settings, CatalogHolder(load_catalog(settings.catalog)), store)
        payload = encode_request(SizeRequest(model="llama-3.1-70b", precision="int4"))
        pressable = [Button("📊 Chart", ChartButton("en", payload).encode())]
        reply = await dispatch(core, UserInfo(0), "1", pressable)
        assert reply is not None and "could not be saved" in reply.text
        stale = await dispatch(core, UserInfo(0), "1", [Button("📊 Chart", "c:en:forged")])
        assert stale is not None and stale.text == t("en", "error.stale")
    finally:
        await store.close()


def test_cli_size_chart_writes_a_png(tmp_path, capsys):
    target = tmp_path / "70b.png"
    assert main(["size", "--model", "llama-3.1-70b", "--precision", "int4", "--chart", str(target)]) == 0
    assert png_size(target.read_bytes())[1] == 840
    assert "1x A40" in capsys.readouterr().out
    assert main(["size", "--params", "70", "--chart", str(tmp_path / "missing" / "x.png")]) == 2
    assert "cannot write the chart" in capsys.readouterr().err


def test_chart_data_is_plain_data():
    data = chart_data(answer_for(model="llama-3.1-70b", precision="int4"), "en")
    assert isinstance(data, ChartData)
    assert data == chart_data(answer_for(model="llama-3.1-70b", precision="int4"), "en")
