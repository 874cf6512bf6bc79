"""Adding a weight format is adding one row to engine/formats/formats.yaml, and nothing else: a copy of the bundled
table with one more row (HQQ 4-bit) is read instead of the bundled one, and a question naming the new format is
parsed, sized, served by vLLM, launched with the row's flag, written into a deep link and rendered.

The row's vLLM facts are this test's own: HQQ is calibration-free, so the row says vLLM makes it from the 16-bit
release while loading (as formats.yaml says of FP8 and bitsandbytes NF4), which is the path that puts a
`--quantization` flag into the launch command. No code in engine/ or bot/ names HQQ.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bot.texts.render import plain, render_answer
from engine.formats.quant import quant_weights_gb
from engine.formats.table import FORMATS_ENV, FORMATS_PATH, canonical_format
from engine.models.registry import default_registry
from engine.parse import parse
from engine.sizing.payload import decode_request, encode_request
from tests.support.seedmath import catalog

HQQ_ROW = {
    "name": "hqq",
    "label": "HQQ 4-bit",
    "kind": "weight_only_int",
    "family": "hqq",
    "aliases": ["HQQ", "hqq-4bit", "hqq 4-bit"],
    # 4-bit codes, a 16-bit scale and a 16-bit zero point per group of 64 weights: 4 + 32/64
    "bits_per_weight": 4.5,
    "embedding_bits": 16,
    "output_layer_bits": 16,
    "tied_embedding_bits": 16,
    "ffn_down_bits": None,
    "ffn_down_fallback_bits": None,
    "unquantized_bits": 16,
    "experts_only": False,
    "keeps_16bit": ["embeddings", "lm_head", "norms"],
    "engines": ["vllm", "transformers"],
    "needs_fp8_hardware": False,
    "needs_fp4_hardware": False,
    "vllm_quantization": "hqq",
    "source": "tests/test_format_recipe.py (a row written for this test)",
}
QUESTION = "Llama 3.1 8B in HQQ 4-bit, 16k context"


@pytest.fixture
def hqq_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled formats data copied with the HQQ row added, and the engine pointed at the copy."""
    data = yaml.safe_load(FORMATS_PATH.read_text(encoding="utf-8"))
    data["formats"].append(HQQ_ROW)
    path = tmp_path / "formats.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    monkeypatch.setenv(FORMATS_ENV, str(path))
    return path


def test_the_bundled_table_knows_no_hqq():
    assert canonical_format("hqq") is None
    result = parse(QUESTION)
    assert result.request is None or result.request.quant is None


def test_a_new_row_is_parsed_sized_checked_launched_and_rendered(hqq_table):
    result = parse(QUESTION)
    request = result.request
    assert request is not None, result.error
    assert (request.model, request.quant, request.precision) == ("llama-3.1-8b", "hqq", None)
    assert request.context_tokens == 16384 and request.ignored == []

    from engine.answer.build import build_answer

    answer = build_answer(request, catalog("gpurenthub"))
    assert answer.error is None, answer.error
    data = answer.to_json()
    assert (data["request"]["quant"], data["request"]["bits_per_weight"]) == ("hqq", 4.5)
    fmt = canonical_format("hqq")
    assert fmt is not None
    weights = answer.requirement.component("weights")
    assert weights.gb == pytest.approx(quant_weights_gb(8, fmt, default_registry().get("llama-3.1-8b")))

    serving = data["serving"]
    assert serving["engine"] == "vllm" and serving["starts"] is True
    assert serving["command"].startswith("vllm serve meta-llama/Llama-3.1-8B-Instruct ")
    assert serving["command"].endswith(" --quantization hqq")

    assert decode_request(encode_request(request)).quant == "hqq"  # a deep link carries it
    assert "HQQ 4-bit" in plain(render_answer(answer, "en"))
