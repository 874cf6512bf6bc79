"""The chart's speed panel: each drawn layout's monthly price against the decode speed each user gets, the
calibrated range, the speed target, the recommended layout marked; the same figures as the answer's JSON and text."""
from __future__ import annotations

import pytest

from bot.config import load_settings
from bot.features.chart import chart_data, render_png
from bot.texts.render import render_answer
from catalog.loader import load_catalog
from engine.answer.build import Answer, build_answer
from engine.sizing.rule import SizeRequest
from tests.support.botharness import TOKEN, Harness
from tests.test_chart import PNG_SIGNATURE, buttons, png_size

GPURENTHUB = load_catalog("gpurenthub").catalog


def answer_for(**fields: object) -> Answer:
    return build_answer(SizeRequest(**fields), GPURENTHUB)  # type: ignore[arg-type]


def test_the_leads_point_is_the_json_speed_and_the_alternatives_their_lines():
    answer = answer_for(model="llama-3.1-70b", precision="int4", batch=20, target_tok_s=15)
    panel = chart_data(answer, "en").speed
    assert panel is not None and panel.users == 20 and panel.target_tok_s == 15
    lead, *others = panel.points
    speed = answer.to_json()["speed"]
    assert isinstance(speed, dict)
    assert lead.chosen and lead.label.startswith("1x MI300X")
    assert lead.tok_s == speed["decode_tok_s_per_user"]
    scale = speed["decode_tok_s_per_user"] / speed["decode_tok_s"]
    assert [lead.low, lead.high] == pytest.approx([bound * scale for bound in speed["range"]])
    assert lead.low < lead.tok_s < lead.high
    assert lead.monthly_usd == answer.to_json()["fit"]["price"]["monthly"]  # type: ignore[index]
    assert not any(point.chosen for point in others)
    # an alternative's point is the "≈ N tok/s each" its line in the answer prints, at its monthly price
    text = render_answer(answer, "en", max_alternatives=5)
    layouts = {layout.label: layout for layout in answer.selection.alternatives}  # type: ignore[union-attr]
    for point in others:
        name, figure = point.label.split("\n")
        layout = layouts[name]
        assert layout.speed is not None and point.tok_s == layout.speed.decode_tok_s_per_user
        assert point.monthly_usd == layout.monthly_usd
        assert figure.endswith(" each") and figure.removesuffix(" each") + " each" in text
    assert panel.legend["target"] == "target ≥ 15 tok/s each"
    assert panel.title == "Decode speed each of 20 users gets against price"


def test_one_user_draws_the_one_stream_speed_and_no_target_line():
    answer = answer_for(model="llama-3.1-70b", precision="int4")
    panel = chart_data(answer, "en").speed
    assert panel is not None and panel.target_tok_s is None and "target" not in panel.legend
    speed = answer.to_json()["speed"]
    assert isinstance(speed, dict)
    lead = panel.points[0]
    assert lead.chosen and lead.tok_s == speed["decode_tok_s"] and [lead.low, lead.high] == speed["range"]
    assert lead.label == "1x A40\n≈ 14 tok/s"
    assert [label for _, label in panel.x_ticks][:2] == ["0", "$200"]


def test_german_labels():
    panel = chart_data(answer_for(model="llama-3.1-70b", precision="int4", batch=20, target_tok_s=15), "de").speed
    assert panel is not None
    assert panel.x_label == "Preis pro Monat" and panel.y_label == "Tokens/s je Nutzer"
    assert panel.title == "Decode-Tempo je Nutzer bei 20 Nutzern gegen Preis"
    assert panel.points[0].label == "1x MI300X\nje ≈ 45 Tok./s"
    assert panel.legend["target"] == "Ziel ≥ 15 Tok./s je Nutzer" and panel.legend["chosen"] == "empfohlen"
    assert ("1.000 $" in [label for _, label in panel.x_ticks])


def test_a_named_layout_that_does_not_hold_it_keeps_its_json_speed_but_is_grey():
    answer = answer_for(params_b=70, precision="bf16", card="h100", gpu_count=1)
    panel = chart_data(answer, "en").speed
    assert panel is not None
    points = {point.label.split("\n")[0]: point for point in panel.points}
    speed = answer.to_json()["speed"]
    assert isinstance(speed, dict)
    assert not points["1x H100 SXM"].holds and points["1x H100 SXM"].tok_s == speed["decode_tok_s_per_user"]
    assert points["1x MI300X"].chosen and points["1x MI300X"].holds


@pytest.mark.parametrize("fields", [dict(model="llama-3.1-8b", workload="lora"), dict(params_b=5000, precision="bf16")])
def test_no_speed_no_panel_and_the_chart_stays_as_it_was(fields):
    data = chart_data(answer_for(**fields), "en")
    assert data.speed is None
    assert png_size(render_png(data))[1] == 480


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_panel_renders_in_both_languages(lang):
    data = chart_data(answer_for(model="llama-3.1-70b", precision="int4", batch=20, target_tok_s=15), lang)
    png = render_png(data)
    assert png.startswith(PNG_SIGNATURE) and len(png) > 5_000
    assert png_size(png)[1] == 840
    without = chart_data(answer_for(model="llama-3.1-70b", precision="int4", batch=20), lang)
    assert without.speed is not None and without.speed.target_tok_s is None
    assert render_png(without) != png  # the target line is drawn


@pytest.fixture
async def bot(tmp_path):
    settings = load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), rate_limit_messages=50,
                             rate_limit_window_s=60)
    async with Harness(settings) as harness:
        yield harness


@pytest.mark.parametrize(("text", "language_code", "label"),
                         [("70B at 4-bit for 20 users at 15 tok/s each", "en", "📊 Chart"),
                          ("Llama 3.1 70B in 4 Bit für 20 Nutzer mit mind. 15 Token/s", "de", "📊 Diagramm")])
async def test_the_chart_button_of_a_speed_target_answer_sends_both_panels(bot, text, language_code, label):
    await bot.send(7, text, language_code=language_code)
    chart = next(b for b in buttons(bot.replies(7)[-1]) if b["text"] == label)
    await bot.press(7, chart["callback_data"], language_code=language_code)
    [photo] = bot.request.sent("sendPhoto")
    png = photo.params["photo"]
    assert png.startswith(PNG_SIGNATURE) and png_size(png)[1] == 840


def test_a_label_moves_aside_rather_than_write_over_a_neighbour():
    from bot.features.chart import SpeedPoint, _label_places

    near = (SpeedPoint("1x A40\n≈ 14 tok/s", 240, 14.1, 10.6, 17.7, chosen=True),
            SpeedPoint("1x RTX A6000\n≈ 16 tok/s", 290, 15.5, 11.6, 19.4))
    places = _label_places(near, right=570, top=45, width_in=5.7, height_in=2.55)
    assert [ha for *_, ha, _ in places] == ["right", "left"]  # ha: the first ends left of its mark
    apart = (near[0], SpeedPoint("2x RTX 3090\n≈ 29 tok/s", 437, 29.4, 22.1, 36.8))
    assert [ha for *_, ha, _ in _label_places(apart, right=570, top=45, width_in=5.7, height_in=2.55)] == ["left"] * 2
