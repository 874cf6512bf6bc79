"""A training job's GPU-hours and price (engine/speed/training.py): within the range of published runs
(tests/data/training_calibration.yaml), and through the parser, the answer, its JSON and the bot's text."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from benchmarks.bench_speed import cards
from catalog.loader import load_catalog
from engine.answer.build import build_answer
from engine.models.registry import default_registry
from engine.parse import Vocabulary, parse
from engine.speed.training import RANGE_HIGH, RANGE_LOW, training_job

RUNS = yaml.safe_load((Path(__file__).parent / "data" / "training_calibration.yaml").read_text(encoding="utf-8"))
CATALOG = load_catalog("gpurenthub").catalog
VOCABULARY = Vocabulary.build(default_registry(), CATALOG.cards, CATALOG.regions)


@pytest.mark.parametrize("run", RUNS, ids=[run["id"] for run in RUNS])
def test_gpu_hours_of_a_published_run_fall_within_the_estimates_range(run):
    job = training_job(cards()[run["card"]], run["count"], 1.0, run["params_b"], run["workload"], run["tokens"],
                       fp8=run.get("fp8", False))
    assert job is not None
    measured = run["seconds"] / 3600 * run["count"]
    assert job.gpu_hours * RANGE_LOW <= measured <= job.gpu_hours * RANGE_HIGH, (job.gpu_hours, measured)


@pytest.mark.parametrize("text", ["QLoRA llama 3.1 70b on 50M tokens, 3 epochs",
                                  "QLoRA Llama 3.1 70B auf 50M Tokens, 3 Epochen"])
def test_a_training_job_question_gives_gpu_hours_price_and_top_up(text):
    request = parse(text, VOCABULARY).request
    assert request is not None and request.train_tokens == 50e6 and request.epochs == 3 and not request.ignored
    answer = build_answer(request, CATALOG)
    assert answer.job is not None and answer.fit is not None
    job = answer.job
    assert job.gpu_hours == pytest.approx(job.hours * answer.fit.count)
    assert job.price_usd == pytest.approx(job.hours * answer.fit.hourly_usd)
    assert answer.topup_amount_usd is not None and answer.topup_amount_usd >= job.price_usd
    data = answer.to_json()["job"]
    assert set(data) >= {"tokens", "epochs", "gpu_hours", "price_usd"} and data["epochs"] == 3


def test_the_job_line_in_the_answer():
    from bot.texts.render import plain, render_answer
    answer = build_answer(parse("QLoRA llama 3.1 70b on 50M tokens, 3 epochs", VOCABULARY).request, CATALOG)
    text = plain(render_answer(answer, "en"))
    assert "150M tokens" in text and "GPU-hours" in text
    german = plain(render_answer(answer, "de"))
    assert "GPU-Stunden" in german
