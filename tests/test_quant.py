"""Named weight formats sized with their real bits, from the question through sizing, fit, JSON, payload, CLI, reply."""
from __future__ import annotations

import json

import pytest

from bot.cli.main import main
from bot.texts.render import plain, render_answer
from engine.formats.quant import quant_weights_gb
from engine.formats.table import canonical_format
from engine.models.registry import default_registry, find_hf_repo, hf_repo
from engine.parse import parse
from engine.sizing.payload import decode_request, encode_request
from engine.sizing.rule import SizeRequest
from tests.support.seedmath import ask, component_gb

# bartowski/Meta-Llama-3.1-70B-Instruct-GGUF (docs/formats.md): the Q4_K_M file is 42.52 GB. The registry sizes
# Llama 3.1 70B at the seed's nominal 70B with its embedding and output matrices (128,256 x 8,192) at the mix's own
# bits: 42.22 GB, 0.7 % under the file (the exact 70.55B would close the rest).
Q4_K_M_70B_FILE_GB = 42.52


def _asked(text: str, catalog: str = "gpurenthub"):
    result = parse(text)
    assert result.request is not None, result.error
    return ask(catalog, **{name: getattr(result.request, name) for name in ("model", "params_b", "precision",
                                                                             "quant", "context_tokens", "batch")})


@pytest.mark.parametrize("catalog", ["gpurenthub", "gpuwithcrypto"])
def test_llama_70b_q4_k_m_is_sized_with_its_real_bits_not_half_a_byte(catalog):
    answer = _asked("Llama 3.1 70B Q4_K_M", catalog)
    weights = component_gb(answer, "weights")
    shape = default_registry().get("llama-3.1-70b")
    assert weights == pytest.approx(quant_weights_gb(70, canonical_format("q4_k_m"), shape))
    assert weights == pytest.approx(Q4_K_M_70B_FILE_GB, rel=0.01)
    assert weights > 35.0 + 6  # not the seed's 0.5 B/param for every 4-bit word (35.0 GB)
    assert answer.requirement.component("weights").code == "weights_quant"


def test_headroom_policy_is_weights_times_1_2_with_the_real_weights():
    answer = _asked("Llama 3.1 70B Q4_K_M", "gpuwithcrypto")
    assert component_gb(answer, "weights") == pytest.approx(Q4_K_M_70B_FILE_GB, rel=0.01)
    assert answer.requirement.total_gb == pytest.approx(component_gb(answer, "weights") * 1.2)


@pytest.mark.parametrize("text, name, bits", [
    ("70B Q5_K_M", "q5_k_m", 5.656), ("70B Q6_K", "q6_k", 6.562), ("70B 2-bit", "q2_k", 2.933),
    ("70B 1.58 bit", "iq1_s", 1.672), ("70B EXL2 4.65bpw", "exl2:4.65", 4.65), ("70B 3-bit", "q3_k_m", 3.84),
    ("70B awq", "awq", 4.15625), ("70B gptq int8", "gptq_int8", 8.195), ("70B nf4", "bnb_nf4", 4.127),
])
def test_each_quoted_format_is_accepted_and_sized_with_its_bits(text, name, bits):
    answer = _asked(text)
    assert answer.request.quant == name
    assert component_gb(answer, "weights") == pytest.approx(70 * bits / 8)
    data = answer.to_json()["request"]
    assert (data["quant"], data["bits_per_weight"]) == (name, bits)
    codes = [getattr(note, "code", None) for note in answer.assumed]
    assert "quant_parts_approx" in codes and "default_precision" not in codes


def test_plain_4_bit_keeps_the_seed_half_byte_and_says_what_a_real_checkpoint_weighs():
    answer = _asked("Llama 3.1 70B 4-bit")
    assert component_gb(answer, "weights") == 35.0
    assert answer.request.quant is None and answer.to_json()["request"]["quant"] is None
    [note] = [note for note in answer.assumed if getattr(note, "code", None) == "real_4bit"]
    assert note.values["gguf"] == "Q4_K_M" and note.values["awq"] == "AWQ"
    assert note.values["gguf_gb"] == pytest.approx(Q4_K_M_70B_FILE_GB, rel=0.01)
    assert "Q4_K_M 42.2 GB" in note and "AWQ 39.5 GB" in note  # hugging-quants' AWQ-INT4 repo: 39.77 GB
    text = plain(render_answer(answer, "de"))
    assert "echter 4-Bit-Checkpoint" in text and "42,2 GB" in text


def test_plain_precisions_are_unchanged():
    for precision, gb in (("int4", 35.0), ("int8", 70.0), ("fp8", 70.0), ("bf16", 140.0)):
        answer = ask("gpurenthub", params_b=70, precision=precision)
        weights = answer.requirement.component("weights")
        assert (weights.code, weights.gb) == ("weights", gb)
        assert answer.to_json()["request"]["bits_per_weight"] is None


def test_fp8_formats_need_fp8_hardware():
    answer = ask("gpurenthub", model="llama-3.1-8b", quant="fp8_dynamic", card="a40", gpu_count=1)
    assert answer.fit is not None and not answer.fit.valid
    assert any("FP8-dynamic" in problem for problem in answer.fit.problems)
    gguf = ask("gpurenthub", model="llama-3.1-8b", quant="q8_0", card="a40", gpu_count=1)
    assert gguf.fit is not None and gguf.fit.valid


def test_training_ignores_the_format_and_says_so():
    answer = ask("gpurenthub", params_b=7, quant="q4_k_m", workload="full")
    assert answer.requirement.component("weights").code == "weights_bf16"
    assert any(getattr(note, "code", None) == "quant_unused" for note in answer.assumed)
    assert answer.to_json()["request"]["quant"] is None


def test_unknown_format_is_an_answer_error():
    from engine.answer.build import build_answer
    from tests.support.seedmath import catalog

    answer = build_answer(SizeRequest(params_b=7, quant="q9_zz"), catalog("gpurenthub"))
    assert answer.error is not None and "unknown weight format" in answer.error


def test_request_line_shows_the_format():
    answer = _asked("Llama 3.1 70B EXL2 4.65bpw")
    assert "EXL2 4.65bpw" in plain(render_answer(answer, "en")).splitlines()[0]


# -- JSON, payload, registry, CLI ------------------------------------------------------------------------

def test_json_request_carries_quant_bits_and_hf_id():
    data = ask("gpurenthub", model="llama-3.1-70b", quant="q4_k_m").to_json()["request"]
    assert data["quant"] == "q4_k_m" and data["bits_per_weight"] == 4.803
    assert data["hf_id"] == "meta-llama/Llama-3.1-70B-Instruct"
    bare = ask("gpurenthub", params_b=70).to_json()["request"]
    assert (bare["quant"], bare["bits_per_weight"], bare["hf_id"]) == (None, None, None)


@pytest.mark.parametrize("quant", ["q4_k_m", "exl2:4.65", "gptq_int8", "bnb_nf4", "iq2_xxs", "fp8_block", "exl2:6"])
def test_payload_round_trips_the_format(quant):
    request = SizeRequest(model="llama-3.1-70b", precision="int4", quant=quant, context_tokens=32768)
    payload = encode_request(request)
    assert len(payload) <= 64
    assert decode_request(payload).quant == quant
    assert decode_request("Mllama-3_1-70bPi4C32k").quant is None  # old payloads decode as before


def test_payload_rejects_an_unknown_format():
    from engine.sizing.payload import PayloadError

    with pytest.raises(PayloadError):
        decode_request("Mllama-3_1-70bFzz9")


def test_hf_repo_lookup_is_case_insensitive():
    registry = default_registry()
    found = find_hf_repo(registry, "META-LLAMA/llama-3.1-70b")
    assert found is not None and found.id == "llama-3.1-70b"
    assert hf_repo("llama-3.1-70b") == "meta-llama/Llama-3.1-70B-Instruct"  # the repo people run (registry hf_id)
    assert find_hf_repo(registry, "nobody/nothing") is None


def test_cli_quant_flag(capsys):
    code = main(["size", "--json", "--model", "meta-llama/Llama-3.1-70B", "--quant", "Q4_K_M"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["request"]["model"] == "llama-3.1-70b" and data["request"]["quant"] == "q4_k_m"
    assert data["requirement"]["components"][0]["formula"] == "70 x 4.825 bits (Q4_K_M, scales included) = 42.2 GB"


def test_cli_unknown_quant_exits_2_with_one_line(capsys):
    code = main(["size", "--params", "70", "--quant", "q9_zz"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "unknown weight format 'q9_zz'" in err


def test_canonical_names_resolve_back():
    for name in ("q4_k_m", "awq", "bnb_nf4", "mxfp4", "fp8_dynamic"):
        fmt = canonical_format(name)
        assert fmt is not None and fmt.name == name


def test_a_model_published_in_the_named_format_keeps_its_published_size():
    shape = default_registry().get("gpt-oss-120b")
    assert shape is not None and shape.published_weights is not None
    answer = _asked("gpt-oss-120b in MXFP4")
    weights = answer.requirement.component("weights")
    assert (weights.code, weights.gb) == ("weights_published", shape.published_weights.gb)
    assert answer.to_json()["request"]["quant"] == "mxfp4"
    other = _asked("gpt-oss-120b Q4_K_M")
    assert other.requirement.component("weights").gb == pytest.approx(
        quant_weights_gb(shape.params_b, canonical_format("q4_k_m"), shape))
