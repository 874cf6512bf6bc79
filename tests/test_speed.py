"""The speed estimate (engine/speed): the calibration points of tests/data/speed_calibration.yaml (public runs,
each with its URL) within their bounds, and what the data says a layout does: a layer split gives one stream no
speed-up, tensor parallelism is sub-linear, context slows decode, per-user speed falls and aggregate rises with
concurrency, prefill follows compute."""
from __future__ import annotations

import json

import pytest
import yaml

from benchmarks.bench_speed import POINTS, cards, hardware, points, summary
from engine.speed.estimate import Hardware, Workload, estimate


def test_every_calibration_point_names_its_public_source():
    data = yaml.safe_load(POINTS.read_text(encoding="utf-8"))
    assert len(data["points"]) >= 15
    for raw in data["points"]:
        assert raw["url"].startswith("https://"), raw["id"]
        assert raw["card"] in cards() or "card_spec" in raw, raw["id"]


def test_single_card_decode_within_25_percent_on_most_points_and_no_set_above_one_and_a_half():
    found = summary(points())
    single, multi = found["single-card decode"], found["multi-card decode"]
    assert single["within_25"] >= 0.75
    assert abs(single["median_error"]) <= 0.15
    assert multi["max_ratio"] <= 1.5
    assert abs(found["prefill"]["median_error"]) <= 0.25


def test_every_point_within_its_band():
    """No point off by more than a third: a change that breaks one family of runs shows here by name."""
    wrong = [(p.id, round(p.error, 2)) for p in points() if not p.excluded and abs(p.error) > 0.35]
    assert wrong == []


LLAMA_70B_Q4 = dict(weights_gb=42.5, active_params_b=70.6, layers=80, moe=False, kv_bytes_per_token=327680,
                    context_tokens=4096, weight_format="q4_k_m", quantized=True)


def _card(card_id: str) -> Hardware:
    return hardware(cards()[card_id])


def test_a_layer_split_gives_one_stream_no_speed_up():
    one = estimate(_card("rtx-3090"), Workload(engine="llama.cpp", count=2, **LLAMA_70B_Q4))
    four = estimate(_card("rtx-3090"), Workload(engine="llama.cpp", count=4, **LLAMA_70B_Q4))
    assert four.decode_tok_s < one.decode_tok_s  # more hand-overs, the same bytes read one card after another
    assert four.ceiling_decode_tok_s == one.ceiling_decode_tok_s  # never bandwidth x count


def test_tensor_parallelism_is_sub_linear():
    speeds = {n: estimate(_card("h100-sxm"), Workload(engine="vllm", count=n, **LLAMA_70B_Q4)).decode_tok_s
              for n in (1, 2, 4, 8)}
    assert speeds[1] < speeds[2] < speeds[4]
    assert speeds[4] < 4 * speeds[1] and speeds[8] < 8 * speeds[1] / 2


def test_context_slows_decode():
    short = estimate(_card("rtx-4090"), Workload(engine="llama.cpp", count=1, weights_gb=4.65, active_params_b=8,
                                                 layers=32, moe=False, kv_bytes_per_token=131072,
                                                 context_tokens=512))
    long = estimate(_card("rtx-4090"), Workload(engine="llama.cpp", count=1, weights_gb=4.65, active_params_b=8,
                                                layers=32, moe=False, kv_bytes_per_token=131072,
                                                context_tokens=98_304))
    assert long.decode_tok_s < 0.6 * short.decode_tok_s


@pytest.mark.parametrize("users", [8, 32])
def test_per_user_speed_falls_and_aggregate_rises_with_users(users):
    work = dict(engine="vllm", count=1, weights_gb=16, active_params_b=8, layers=32, moe=False,
                kv_bytes_per_token=131072, context_tokens=2048)
    alone = estimate(_card("h100-sxm"), Workload(**work))
    many = estimate(_card("h100-sxm"), Workload(users=users, **work))
    assert many.decode_tok_s_per_user < alone.decode_tok_s
    assert alone.aggregate_tok_s < many.aggregate_tok_s < users * alone.aggregate_tok_s


def test_prefill_follows_compute_not_bandwidth():
    """An RTX 4090 has about the bandwidth of an RTX 3090 and over twice its tensor TFLOPS."""
    work = Workload(engine="llama.cpp", count=1, weights_gb=13.5, active_params_b=6.74, layers=32, moe=False,
                    kv_bytes_per_token=524288, context_tokens=512)
    fast, slow = estimate(_card("rtx-4090"), work), estimate(_card("rtx-3090"), work)
    assert fast.prefill_tok_s is not None and slow.prefill_tok_s is not None
    assert fast.prefill_tok_s > 2 * slow.prefill_tok_s
    assert fast.ttft_s is not None and fast.ttft_s < slow.ttft_s  # type: ignore[operator]


def test_a_card_without_a_tflops_source_gives_no_prefill_figure():
    work = Workload(engine="vllm", count=1, weights_gb=16, active_params_b=8, layers=32, moe=False,
                    kv_bytes_per_token=131072, context_tokens=2048)
    speed = estimate(Hardware(1790, None, None, "pcie"), work)
    assert speed.prefill_tok_s is None and speed.ttft_s is None and speed.decode_tok_s > 0
    assert speed.to_json()["basis"] == "calibrated" and speed.low < speed.decode_tok_s < speed.high


def test_a_published_run_of_the_model_on_the_card_is_quoted_as_measured(capsys):
    """Llama 3 8B Q4_0 on one RTX 3090: 155 tok/s at 256 tokens (ggml-org/llama.cpp#15802), carried to 8k."""
    from bot.cli.main import main
    code = main(["size", "--model", "llama-3-8b", "--quant", "q4_0", "--card", "rtx-3090", "--json"])
    speed = json.loads(capsys.readouterr().out)["speed"]
    assert code == 0 and speed["basis"] == "measured" and speed["source"].endswith("/pull/15802")
    assert 0.7 * 155.02 < speed["decode_tok_s"] <= 155.02  # slower at 8,192 tokens than at 256
    code = main(["size", "--model", "llama-3-8b", "--quant", "q4_0", "--card", "rtx-4090", "--count", "2", "--json"])
    assert json.loads(capsys.readouterr().out)["speed"]["basis"] == "calibrated"  # no run of that layout


def test_sliding_window_layers_read_only_their_window_when_decoding():
    """Gemma 3 27B at 32k: its 52 sliding layers read 1,024 tokens, its 10 global layers all 32k. Counting every
    layer at the whole context (as a dense model) would read six times the KV and halve the speed."""
    per_layer = 2 * 16 * 128 * 2
    windowed = Workload(engine="vllm", count=1, weights_gb=54.8, active_params_b=27.4, layers=62, moe=False,
                        kv_bytes_per_token=10 * per_layer, context_tokens=32_768,
                        window_kv_bytes_per_token=52 * per_layer, window_tokens=1_024)
    assert windowed.kv_read_bytes(32_768) == 10 * per_layer * 32_768 + 52 * per_layer * 1_024
    assert windowed.kv_read_bytes(512) == 62 * per_layer * 512  # below the window every layer holds every token
    dense = Workload(engine="vllm", count=1, weights_gb=54.8, active_params_b=27.4, layers=62, moe=False,
                     kv_bytes_per_token=62 * per_layer, context_tokens=32_768)
    card = _card("h100-sxm")
    assert estimate(card, windowed).decode_tok_s > 1.1 * estimate(card, dense).decode_tok_s
