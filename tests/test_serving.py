"""The serving check: vLLM 0.34.0 (and older accounting) / llama.cpp 0c1e57098 constants, formulas, public startup
logs."""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from catalog.loader import load_catalog
from engine.models.registry import ModelShape, default_registry
from engine.notes import Note
from engine.serving import (
    BEFORE_0_20,
    Gpu,
    LlamaCppSettings,
    ModelDims,
    ResidentWeights,
    ServingModel,
    VllmSettings,
    biggest_model_params_b,
    command,
    constants,
    kv,
    kv_bytes_per_token_per_gpu,
    llama_cpp_check,
    max_concurrency_at,
    max_context_for_layout,
    memory,
    vllm_check,
    weights,
)
from engine.serving.kv import ServingShapeError
from engine.serving.reverse import serving_check, typical_model
from engine.serving.vllm import _batch_limits
from tests import serving_datapoints as dp

REGISTRY = default_registry()
ROOT = Path(__file__).resolve().parents[1]
GIB = 2**30

# Cards as the catalogs give them (memory_mib from research §7).
A40 = Gpu("A40", 45520)
A100_80 = Gpu("A100-SXM4-80GB", 81920)
H100 = Gpu("H100 80GB HBM3", 81089)
RTX_4090 = Gpu("RTX 4090", 24563)

CONTRACT_KEYS = {"engine", "tp", "weights_gb", "weights_gb_per_gpu", "kv_bytes_per_token_per_gpu", "kv_gb_per_gpu",
                 "runtime_overhead_gb_per_gpu", "usable_gb_per_gpu", "gpu_memory_utilization",
                 "max_num_batched_tokens", "starts", "max_context_tokens", "max_concurrency", "command", "notes"}


def shape(model_id: str) -> ModelShape:
    found = REGISTRY.get(model_id)
    assert found is not None
    return found


def llama_70b_awq() -> ServingModel:
    """Llama 3.1 70B at 4 bit with embeddings and lm_head kept 16-bit (config: vocab 128256, hidden 8192)."""
    return ServingModel(shape("llama-3.1-70b"), ResidentWeights.from_precision(
        70.554, 0.5, vocab_size=128256, hidden_size=8192), ModelDims(8192, 28672, 128256),
        "hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4")


# -- public startup logs ----------------------------------------------------------------------------------------

ROWS = dp.all_rows()


@pytest.mark.parametrize("row", ROWS, ids=[f"{row.id}: {row.quantity} [{row.source}]" for row in ROWS])
def test_datapoint_within_measured_error(row: dp.Row) -> None:
    assert row.within, f"{row.predicted} vs logged {row.logged}: {row.error_percent:+.2f} % > {row.tolerance_percent} %"


def test_docs_carry_the_datapoints_table() -> None:
    docs = (ROOT / "docs" / "serving.md").read_text(encoding="utf-8")
    assert dp.render_table(ROWS) in docs, "regenerate with: python -m tests.serving_datapoints"
    assert dp.render_figures(dp.example_figures()) in docs, "regenerate with: python -m tests.serving_datapoints"


def test_layouts_the_memory_rule_fits_do_not_all_start() -> None:
    """The memory rule fits "70B at 4-bit, 32k" on 1x A40 and "Llama 3.1 70B AWQ at 128k" on 1x A100 80 GB; neither
    starts in vLLM, two A100s do."""
    starts = [figure.check.starts for figure in dp.example_figures() if "Qwen3-32B" not in figure.question]
    assert starts == [False, False, False, True]


def test_qwen3_32b_on_one_h100_at_16k_starts_under_every_accounting() -> None:
    """vLLM 0.11 started it (llm-d table: 4.45 GiB of KV cache at 16000); the check subtracted CUDA graphs 0.11 did
    not count when it followed one release only. 0.34 keeps a margin instead of 8 % of the card and holds more."""
    checks = {figure.question: figure.check for figure in dp.example_figures() if "Qwen3-32B" in figure.question}
    old, middle, new = checks.values()
    assert old.starts and middle.starts and new.starts
    assert middle.max_context_tokens < old.max_context_tokens < new.max_context_tokens
    assert "--gpu-memory-utilization" not in new.command


def test_exact_rows_are_exact_up_to_log_rounding() -> None:
    """The KV arithmetic has no estimate in it: those rows may only miss by the log's printed rounding."""
    exact = [row for row in ROWS if "tokens" in row.quantity and "TP4" not in row.quantity]
    assert len(exact) >= 5
    assert all(row.tolerance_percent < 0.11 for row in exact)  # 0.005 GiB of a 4.99 GiB log: 0.1002 %


# -- vLLM constants (release 0.34.0, and the accounting of 0.20-0.33 and 0.10-0.19) -----------------------------

def test_vllm_constants_of_the_release_followed() -> None:
    assert constants.VLLM_VERSION == "0.34.0"
    assert constants.GPU_MEMORY_UTILIZATION_MEASURED == 1.0  # config/cache.py:495-501 in 0.34.0
    assert constants.GPU_MEMORY_UTILIZATION == 0.92  # config/cache.py:215 in 0.33.0
    assert constants.GPU_MEMORY_UTILIZATION_BEFORE_0_20 == 0.9  # config/cache.py:41 in 0.19.1
    assert constants.BLOCK_SIZE == 16
    assert VllmSettings().utilization == 1.0 and VllmSettings().gpu_memory_utilization is None
    assert BEFORE_0_20.utilization == 0.9 and not BEFORE_0_20.count_cudagraphs


@pytest.mark.parametrize(("card", "mib", "expected"), [
    ("MI300X", 196592, (16384, 1024)), ("B200", 182631, (16384, 1024)), ("H200", 143156, (8192, 1024)),
    ("H100 80GB HBM3", 81089, (8192, 1024)), ("A100-SXM4-80GB", 81920, (2048, 256)), ("L40S", 45589, (2048, 256)),
    ("RTX 4090", 24563, (2048, 256)),
])
def test_serve_batch_defaults_by_card_memory(card: str, mib: int, expected: tuple[int, int]) -> None:
    """arg_utils.py:2958-3006 (research §1 table): the A100 stays in the small tier by name."""
    assert memory.batch_defaults(mib, card) == expected


def test_llm_class_batch_defaults() -> None:
    assert memory.batch_defaults(40326, "A100-SXM4-40GB", usage="llm") == (8192, 256)
    assert memory.batch_defaults(81089, "H100", usage="llm") == (16384, 1024)


def test_batch_tokens_never_exceed_sequences_times_context() -> None:
    settings = VllmSettings(max_num_seqs=2)
    defaults = memory.batch_defaults(H100.memory_mib, H100.name, settings.usage)
    assert _batch_limits(defaults, settings, 1024) == (2048, 2)


def test_requested_memory_is_ceil_of_total_times_utilization() -> None:
    assert memory.requested_bytes(1, 0.5) == 2**19
    assert memory.requested_bytes(81089, 0.9) == math.ceil(81089 * 2**20 * 0.9)


# -- KV cache ---------------------------------------------------------------------------------------------------

def test_kv_heads_split_then_replicated() -> None:
    assert kv.kv_heads_per_gpu(8, 2) == 4
    assert kv.kv_heads_per_gpu(8, 8) == 1
    assert kv.kv_heads_per_gpu(4, 8) == 1  # fewer KV heads than ranks: one each


def test_kv_bytes_per_token_per_gpu_full_attention() -> None:
    llama = shape("llama-3.1-70b")
    assert kv_bytes_per_token_per_gpu(llama, 1, "auto") == 80 * 2 * 8 * 128 * 2
    assert kv_bytes_per_token_per_gpu(llama, 4, "auto") == 80 * 2 * 2 * 128 * 2
    assert kv_bytes_per_token_per_gpu(llama, 16, "auto") == 80 * 2 * 1 * 128 * 2  # replicated
    assert kv_bytes_per_token_per_gpu(llama, 1, "fp8") == 80 * 2 * 8 * 128


def test_mla_latent_is_whole_on_every_rank() -> None:
    v3 = shape("deepseek-v3")
    per_rank = kv_bytes_per_token_per_gpu(v3, 8, "auto")
    assert per_rank == kv_bytes_per_token_per_gpu(v3, 1, "auto") == 61 * (512 + 64) * 2


def test_sliding_layers_add_nothing_past_the_window() -> None:
    gemma = shape("gemma-3-1b")
    assert kv_bytes_per_token_per_gpu(gemma, 1, "auto") == 4 * 2 * 1 * 256 * 2  # only the 4 full layers


def test_sliding_window_reserve_follows_the_release() -> None:
    """research §3.3: a 512-token window on H100 (mnbt 8192) reserves ~8.7k tokens in 0.11, ~16.9k in 0.33."""
    assert kv.sliding_window_tokens(512, 8192, 131072, in_flight_batches=1) == 511 + 8192
    assert kv.sliding_window_tokens(512, 8192, 131072) == 511 + 2 * 8192
    assert kv.sliding_window_tokens(512, 8192, 2048) == 2048  # never more than max_model_len


def test_layer_groups() -> None:
    assert kv.layer_groups(shape("gemma-3-1b")) == kv.LayerGroups(size=4, full=1, sliding=6)
    assert kv.layer_groups(shape("gpt-oss-120b")) == kv.LayerGroups(size=18, full=1, sliding=1)
    assert kv.layer_groups(shape("llama-3.1-8b")) == kv.LayerGroups(size=32, full=1, sliding=0)


def test_blocks_per_request_sliding_gets_one_extra_block() -> None:
    gemma = shape("gemma-3-1b")
    assert kv.blocks_per_request(gemma, 2048, 8192, in_flight_batches=1) == 128 + 6 * 129  # research §3.3


def test_kv_cache_tokens_is_concurrency_times_context() -> None:
    """kv_cache_utils.py:1120-1127 (0.33): int(max concurrency x max_model_len); llava log: 28 234 blocks at 4096."""
    assert kv.kv_cache_tokens(28234, 256, 4096) == 451744
    gemma = shape("gemma-3-1b")
    assert kv.kv_cache_tokens(902, kv.blocks_per_request(gemma, 2048, 8192, 1), 2048) == 2048


def test_unknown_attention_shape_is_a_typed_error() -> None:
    with pytest.raises(ServingShapeError):
        kv_bytes_per_token_per_gpu(shape("deepseek-v4-flash"), 1, "auto")
    for model_id in ("deepseek-v4-flash", "flux.1-dev"):
        model = ServingModel(shape(model_id), ResidentWeights.from_precision(12, 2))
        with pytest.raises(ServingShapeError):
            vllm_check(model, H100, 4096)
        with pytest.raises(ServingShapeError):
            llama_cpp_check(model, H100, 4096)
    with pytest.raises(ValueError):
        kv.kv_element_bytes("int3")


def test_llama_cpp_cache_type_bytes() -> None:
    """ggml-common.h block structs: q8_0 34 B and q4_0 18 B per 32 elements."""
    assert kv.kv_element_bytes("q8_0") == 1.0625
    assert kv.kv_element_bytes("q4_0") == 0.5625
    assert kv.kv_element_bytes("f16") == 2


def test_llama_cpp_swa_cells() -> None:
    """llama-kv-cache-iswa.cpp:68-104: pad256(min(n_ctx, n_swa x n_seq + n_ubatch))."""
    assert kv.llama_cpp_swa_cells(32768, 1024, 1, True) == 1536
    assert kv.llama_cpp_swa_cells(32768, 1024, 4, True) == 4608
    assert kv.llama_cpp_swa_cells(1024, 1024, 4, True) == 1024


# -- weights ----------------------------------------------------------------------------------------------------

def test_vocab_padding_to_64() -> None:
    assert weights.padded_vocab(128256) == 128256
    assert weights.padded_vocab(32001) == 32064


def test_from_precision_keeps_vocabulary_16_bit() -> None:
    int4 = ResidentWeights.from_precision(8.03, 0.5, vocab_size=128256, hidden_size=4096)
    assert int4.embedding_bytes == int4.lm_head_bytes == 128256 * 4096 * 2
    assert int4.body_bytes == pytest.approx((8.03e9 - 2 * 128256 * 4096) * 0.5)
    tied = ResidentWeights.from_precision(1.0, 2, vocab_size=262144, hidden_size=1152, tied=True)
    assert tied.lm_head_bytes == 0 and tied.tied
    bare = ResidentWeights.from_precision(70, 0.5)
    assert bare.total_bytes == 35e9 and bare.embedding_bytes == 0


def test_weights_at_a_sizing_precision() -> None:
    fp8 = weights.weights_at_precision(70.554, "fp8", vocab_size=128256, hidden_size=8192)
    assert fp8.body_bytes == pytest.approx((70.554e9 - 2 * 128256 * 8192) * 1)
    assert fp8.embedding_bytes == 128256 * 8192 * 2
    assert weights.weights_at_precision(7, "bf16").total_bytes == 14e9
    with pytest.raises(ValueError):
        weights.weights_at_precision(7, "int3")


def test_weights_per_gpu_under_tp() -> None:
    parts = ResidentWeights(body_bytes=100.0, embedding_bytes=10.0 * 32000, lm_head_bytes=10.0 * 32000,
                            replicated_bytes=7.0, vocab_size=32000)
    assert weights.vllm_weights_bytes_per_gpu(parts, 4) == 100 / 4 + 2 * 10 * 32000 / 4 + 7
    uneven = replace(parts, vocab_size=32001, embedding_bytes=32001.0, lm_head_bytes=32001.0)
    assert weights.vllm_weights_bytes_per_gpu(uneven, 1) == 100 + 2 * 32064 + 7


def test_llama_cpp_weights_leave_the_input_embedding_on_the_host() -> None:
    parts = ResidentWeights(body_bytes=1000.0, embedding_bytes=50.0, lm_head_bytes=50.0, vocab_size=10)
    assert weights.llama_cpp_weights_bytes_per_gpu(parts, 2) == 500 + 50
    tied = replace(parts, lm_head_bytes=0.0)
    assert weights.llama_cpp_weights_bytes(tied) == 1050  # the output copy of the tied matrix


def test_mxfp4_padding_per_backend() -> None:
    marlin = weights.mxfp4_expert_bytes(layers=1, experts=1, hidden=2880, intermediate=2880, backend="marlin")
    assert marlin == 3 * 3072 * 2944 * 4.25 / 8
    triton = weights.mxfp4_expert_bytes(layers=1, experts=1, hidden=2880, intermediate=2880, backend="triton")
    assert triton == 3 * 2880 * 2880 * 4.25 / 8
    with pytest.raises(ValueError):
        weights.mxfp4_expert_bytes(layers=1, experts=1, hidden=1, intermediate=1, backend="magic")


# -- usable memory ----------------------------------------------------------------------------------------------

def test_activation_estimate_caveat_is_a_note() -> None:
    model = ServingModel(shape("llama-3.1-8b"), ResidentWeights.from_precision(8.03, 2), dp.LLAMA_31_8B_DIMS)
    check = vllm_check(model, H100, 8192)
    codes = {note.code for note in check.notes if isinstance(note, Note)}
    assert "serving_activation_estimate" in codes and "serving_cudagraph_estimate" in codes
    note = next(note for note in check.notes if note.code == "serving_activation_estimate")
    assert note.values["error_percent"] == 30


def test_moe_uses_the_measured_activation() -> None:
    dims = ModelDims(2880, 2880, 201088, moe=True)
    assert memory.activation_peak_bytes(dims, 8192, 1024, 1) + memory.non_torch_bytes(1) == pytest.approx(7.44 * GIB)


def test_cudagraphs_counted_since_0_20_and_not_when_eager() -> None:
    assert memory.cudagraph_bytes(8, 1, enforce_eager=True) == 0
    assert memory.cudagraph_bytes(8, 1, enforce_eager=False) == 1.0 * GIB
    assert memory.cudagraph_bytes(70, 2, enforce_eager=False) == 2.0 * GIB
    model = ServingModel(shape("llama-3.1-8b"), ResidentWeights.from_precision(8.03, 2), dp.LLAMA_31_8B_DIMS)
    now = vllm_check(model, H100, 8192)
    before = vllm_check(model, H100, 8192, settings=replace(VllmSettings(), count_cudagraphs=False))
    assert now.runtime_overhead_gb_per_gpu == pytest.approx(before.runtime_overhead_gb_per_gpu + GIB / 1e9)


def test_llama_cpp_fit_margin_and_compute() -> None:
    assert constants.FIT_MARGIN_MIB == 1024  # common/common.h:483: --fit keeps 1024 MiB free on every device
    model = ServingModel(shape("llama-3.1-8b"), ResidentWeights.from_precision(8.03, 0.5))
    check = llama_cpp_check(model, RTX_4090, 8192)
    assert check.runtime_overhead_gb_per_gpu == pytest.approx((1024 + 800) * 2**20 / 1e9)
    assert check.usable_gb_per_gpu == pytest.approx((24563 - 1024 - 800) * 2**20 / 1e9)


# -- everyday questions checked -----------------------------------------------------------------------------------

def test_70b_at_4_bit_32k_does_not_start_on_one_a40() -> None:
    for model in (typical_model(70, 0.5), llama_70b_awq()):
        vllm = vllm_check(model, A40, 32768)
        assert not vllm.starts
        assert vllm.max_context_tokens is not None and vllm.max_context_tokens < 32768
    # llama.cpp keeps the input embedding on the host; with the 16-bit vocabulary of a real 4-bit checkpoint it
    # does not fit either (a bare 0.5 B/param for every weight would, by 0.1 GB: real GGUF bytes come from formats).
    llama = llama_cpp_check(llama_70b_awq(), A40, 32768, settings=LlamaCppSettings(quant="Q4_K_M"))
    assert not llama.starts and llama.max_context_tokens is not None
    assert any(note.code == "serving_fit_would_adjust" for note in llama.notes)
    assert f" -c {llama.max_context_tokens} " in llama.command


def test_llama_31_70b_awq_at_128k_does_not_start_on_one_a100_80gb() -> None:
    check = vllm_check(llama_70b_awq(), A100_80, 131072)
    assert not check.starts
    assert check.max_concurrency is not None and check.max_concurrency < 1
    assert check.max_context_tokens is not None and 65536 < check.max_context_tokens < 131072
    too_small = next(note for note in check.notes if note.code == "serving_kv_too_small")
    assert too_small.values["max_tokens"] == check.max_context_tokens
    assert too_small.values["needed_gib"] == pytest.approx(131072 * 80 * 2 * 8 * 128 * 2 / GIB)
    assert check.command.endswith(f"--max-model-len {check.max_context_tokens}")  # a command that starts
    assert any(note.code == "serving_command_reduced" for note in check.notes)
    two = vllm_check(llama_70b_awq(), A100_80, 131072, tp=2)
    assert two.starts and two.max_context_tokens == 131072


def test_gpt_oss_120b_on_one_h100_does_not_start_with_the_full_context() -> None:
    """vLLM #23278 (util 0.9, -2.14 GiB) and #27508 (util 0.95, mnbt 1024, 1.71 GiB left, start failed)."""
    g = dp.GPT_OSS_120B
    experts = weights.mxfp4_expert_bytes(layers=36, experts=128, hidden=2880, intermediate=2880)
    attention = 36 * 2880 * (2 * 64 * 64 + 2 * 8 * 64) * 2
    vocab = g["vocab"] * g["hidden"] * 2
    model = ServingModel(shape("gpt-oss-120b"), ResidentWeights(experts + attention, vocab, vocab, 0.0, g["vocab"]),
                         ModelDims(2880, 2880, 201088, moe=True), "openai/gpt-oss-120b")
    assert not vllm_check(model, H100, 131072, settings=BEFORE_0_20).starts
    tight = replace(BEFORE_0_20, gpu_memory_utilization=0.95, max_num_batched_tokens=1024)
    check = vllm_check(model, H100, 131072, settings=tight)
    assert not check.starts
    assert check.runtime_overhead_gb_per_gpu * 1e9 / GIB == pytest.approx(7.44)  # activation + non-torch


def test_tp_must_divide_the_heads() -> None:
    check = vllm_check(llama_70b_awq(), A100_80, 8192, tp=3)
    assert not check.starts and check.max_context_tokens is None and check.max_concurrency is None
    assert any(note.code == "serving_tp_heads" for note in check.notes)


@pytest.mark.parametrize(("context", "batch", "gpus"), [(0, 1, 1), (-5, 1, 1), (4096, 0, 1), (4096, 1, 0),
                                                       (4096, 1, 65), (20_000_000, 1, 1)])
def test_bad_requests_are_value_errors(context: int, batch: int, gpus: int) -> None:
    with pytest.raises(ValueError):
        vllm_check(llama_70b_awq(), A100_80, context, batch=batch, tp=gpus)
    with pytest.raises(ValueError):
        llama_cpp_check(llama_70b_awq(), A100_80, context, batch=batch, devices=gpus)
    with pytest.raises(ValueError):
        Gpu("broken", 0)


def test_context_over_the_model_maximum_is_refused() -> None:
    check = vllm_check(llama_70b_awq(), A100_80, 262144, tp=4)
    assert not check.starts
    assert any(note.code == "serving_context_over_max" for note in check.notes)


def test_max_context_capped_at_the_model_maximum_says_so() -> None:
    model = ServingModel(shape("llama-3.1-8b"), ResidentWeights.from_precision(8.03, 2), dp.LLAMA_31_8B_DIMS)
    check = vllm_check(model, H100, 8192)
    assert check.max_context_tokens == 131072
    assert any(note.code == "serving_context_capped" for note in check.notes)


def test_sliding_window_reserve_is_noted() -> None:
    model = ServingModel(shape("gemma-3-1b"), ResidentWeights.from_precision(1.0, 2))
    check = vllm_check(model, H100, 32768)
    assert check.starts
    assert any(note.code == "serving_sliding_reserve" for note in check.notes)
    assert any(note.code == "serving_dims_assumed" for note in check.notes)


def test_fp8_kv_halves_the_cache() -> None:
    model = llama_70b_awq()
    auto = vllm_check(model, A100_80, 32768)
    fp8 = vllm_check(model, A100_80, 32768, settings=VllmSettings(kv_cache_dtype="fp8"))
    assert fp8.kv_bytes_per_token_per_gpu == auto.kv_bytes_per_token_per_gpu / 2
    assert fp8.kv_gb_per_gpu == pytest.approx(auto.kv_gb_per_gpu / 2)
    assert "--kv-cache-dtype fp8" in fp8.command


def test_batch_beyond_concurrency_is_noted() -> None:
    check = vllm_check(llama_70b_awq(), A100_80, 32768, batch=64)
    assert check.starts
    assert check.max_concurrency is not None and check.max_concurrency < 64
    assert any(note.code == "serving_concurrency_below_batch" for note in check.notes)


def test_llama_cpp_two_devices_split_layers_and_slots() -> None:
    settings = LlamaCppSettings(quant="Q4_K_M", cache_type_k="q8_0", cache_type_v="q8_0")
    check = llama_cpp_check(llama_70b_awq(), A40, 32768, batch=2, devices=2, settings=settings)
    assert check.starts
    assert check.kv_bytes_per_token_per_gpu == 40 * 2 * 1024 * 1.0625
    assert check.command == ("llama-server -hf hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4:Q4_K_M -c 65536 "
                             "-ngl 99 -np 2 --kv-unified --tensor-split 1,1 --cache-type-k q8_0 --cache-type-v q8_0")


def test_quantized_v_cache_needs_flash_attention() -> None:
    settings = LlamaCppSettings(cache_type_v="q4_0", flash_attn=False)
    model = ServingModel(shape("llama-3.1-8b"), ResidentWeights.from_precision(8.03, 0.5))
    check = llama_cpp_check(model, RTX_4090, 4096, settings=settings)
    assert not check.starts and any(note.code == "serving_v_cache_needs_fa" for note in check.notes)


# -- the JSON object and the commands ----------------------------------------------------------------------------

def test_to_json_is_the_contract_v2_serving_object() -> None:
    for check in (vllm_check(llama_70b_awq(), A100_80, 8192), llama_cpp_check(llama_70b_awq(), A100_80, 8192)):
        data = check.to_json()
        assert set(data) == CONTRACT_KEYS
        notes = data["notes"]
        assert isinstance(notes, list) and all(isinstance(note, str) for note in notes)
    assert llama_cpp_check(llama_70b_awq(), A100_80, 8192).to_json()["gpu_memory_utilization"] is None


def test_vllm_command() -> None:
    assert command.vllm_command("meta-llama/Llama-3.1-8B", tp=2, max_model_len=32768,
                                gpu_memory_utilization=0.92) == (
        "vllm serve meta-llama/Llama-3.1-8B --tensor-parallel-size 2 --max-model-len 32768 "
        "--gpu-memory-utilization 0.92")
    assert command.vllm_command("m", tp=1, max_model_len=8192, gpu_memory_utilization=None) == \
        "vllm serve m --tensor-parallel-size 1 --max-model-len 8192"  # the release's default: no flag
    full = command.vllm_command(None, tp=1, max_model_len=4096, gpu_memory_utilization=0.9, kv_cache_dtype="fp8",
                                quantization="fp8", max_num_seqs=8)
    assert full == ("vllm serve <your-model> --tensor-parallel-size 1 --max-model-len 4096 "
                    "--gpu-memory-utilization 0.9 --kv-cache-dtype fp8 --quantization fp8 --max-num-seqs 8")


def test_llama_cpp_command() -> None:
    assert command.llama_cpp_command("bartowski/Llama-3.1-8B-GGUF", quant="Q4_K_M", n_ctx=8192) == (
        "llama-server -hf bartowski/Llama-3.1-8B-GGUF:Q4_K_M -c 8192 -ngl 99")
    assert command.llama_cpp_command(None, quant=None, n_ctx=4096).startswith("llama-server -hf <your-model> -c 4096")


# -- reverse questions ------------------------------------------------------------------------------------------

def test_max_context_for_layout() -> None:
    model = llama_70b_awq()
    one = max_context_for_layout(model, A100_80)
    two = max_context_for_layout(model, A100_80, tp=2)
    assert one is not None and two == 131072 and one < two
    assert max_context_for_layout(model, RTX_4090) is None  # the weights alone do not fit
    assert max_context_for_layout(model, A100_80, engine="llama.cpp") is not None


def test_max_concurrency_at() -> None:
    model = llama_70b_awq()
    at_8k = max_concurrency_at(model, A100_80, 8192)
    at_32k = max_concurrency_at(model, A100_80, 32768)
    assert at_8k is not None and at_32k is not None and at_8k == pytest.approx(4 * at_32k, rel=0.01)
    assert max_concurrency_at(model, RTX_4090, 8192) is None


def test_biggest_model() -> None:
    best = biggest_model_params_b(H100, bytes_per_param=0.5, context_tokens=32768)
    assert best is not None
    assert serving_check(typical_model(best, 0.5), H100, 32768).starts
    assert not serving_check(typical_model(best + 1, 0.5), H100, 32768).starts
    assert biggest_model_params_b(Gpu("tiny", 512), bytes_per_param=2, context_tokens=4096) is None
    with pytest.raises(ValueError):
        serving_check(typical_model(7, 2), H100, 4096, engine="tgi")


# -- catalog ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("catalog_id", ["gpurenthub", "gpuwithcrypto"])
def test_every_bundled_card_has_runtime_memory_with_a_source(catalog_id: str) -> None:
    catalog = load_catalog(catalog_id).catalog
    for card in catalog.cards:
        assert card.memory_mib is not None and card.memory_mib_source, card.id
        ratio = card.memory_mib * 2**20 / (card.vram_gb * 1e9)
        assert 0.95 < ratio < 1.1, card.id  # the seed's GB are nominal: GiB on the box, a little less at runtime
        assert Gpu.from_card(card).memory_mib == card.memory_mib
