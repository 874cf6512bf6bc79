"""A Hugging Face repo id names one model and one checkpoint, read whole, the same way in `cardfit ask`, `cardfit size
--model`, a chat question, inline and /quote: a distill is never its teacher, and a pre-quantized repo (AWQ, GPTQ,
FP8, FP8-dynamic, NVFP4, bnb, GGUF) is sized at its own size and format, and its launch command names it."""
from __future__ import annotations

import json

import pytest

from bot.cli.main import main
from bot.config import load_settings
from catalog.loader import load_catalog
from engine.answer.build import build_answer
from engine.answer.followup import request_from_json, request_to_json
from engine.models.registry import GGUF_REPO, build_registry, default_registry, load_entries
from engine.parse import Vocabulary, parse
from engine.parse.repos import read_repo
from engine.sizing.payload import PayloadError, decode_request, encode_request
from engine.sizing.rule import SizeRequest
from tests.support.botharness import TOKEN, Harness

STAFF, CUSTOMER = 43, 44
CATALOG = load_catalog("gpurenthub").catalog
VOCABULARY = Vocabulary.of_catalog(CATALOG)


def ask_json(capsys, text: str) -> dict:
    assert main(["ask", "--json", text]) == 0
    return json.loads(capsys.readouterr().out)


def size_json(capsys, *argv: str) -> dict:
    assert main(["size", "--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def weights_gb(data: dict) -> float:
    return next(c["gb"] for c in data["requirement"]["components"] if c["name"] == "weights")


# -- the registry: what a whole repo id names ---------------------------------------------------------------

@pytest.mark.parametrize("repo,model,quant", [
    ("Qwen/Qwen2.5-72B-Instruct", "qwen2.5-72b", None),
    ("qwen/qwen2.5-72b-instruct-awq", "qwen2.5-72b", "awq"),  # listed, any case
    ("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B", "deepseek-r1-0528-qwen3-8b", None),
    ("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", "llama-3.3-70b", "fp8_dynamic"),
    ("meta-llama/Meta-Llama-3.1-405B-Instruct-FP8", "llama-3.1-405b", "fp8_channel"),  # Meta's former repo name
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8", "qwen3-coder-30b-a3b", "fp8_block"),
    ("Qwen/Qwen2.5-Coder-32B-Instruct-AWQ", "qwen2.5-coder-32b", "awq"),
    ("hugging-quants/Meta-Llama-3.1-70B-Instruct-GPTQ-INT4", "llama-3.1-70b", "gptq"),
    ("neuralmagic/Meta-Llama-3.1-8B-Instruct-quantized.w4a16", "llama-3.1-8b", "w4a16"),
    ("unsloth/Llama-3.3-70B-Instruct-bnb-4bit", "llama-3.3-70b", "bnb_nf4"),
    ("nvidia/Llama-3.3-70B-Instruct-FP4", "llama-3.3-70b", "nvfp4"),
    ("TheBloke/Llama-2-70B-Chat-AWQ", "llama-2-70b", "awq"),
    ("bartowski/Qwen2.5-Coder-32B-Instruct-GGUF", "qwen2.5-coder-32b", GGUF_REPO),
    ("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", "llama-3.1-8b", GGUF_REPO),  # a listed GGUF repo, as a whole
])
def test_a_repo_id_names_its_model_and_checkpoint(repo, model, quant):
    named = default_registry().named_repo(repo)
    assert named is not None and named[0].id == model
    assert (named[1].quant if named[1] is not None else None) == quant


@pytest.mark.parametrize("repo", [
    "Qwen/Qwen2.5-72B-Instruct-Turbo",  # more than the model's name, and no publisher's suffix
    "deepseek-ai/DeepSeek-R1-0528-Qwen3-14B",  # no such distill in the registry: never R1-0528
    "acme/nothing-7b", "H100/H200", "and/or",
])
def test_a_repo_id_is_never_read_by_a_prefix_of_its_name(repo):
    assert default_registry().named_repo(repo) is None


def test_a_renamed_repo_keeps_the_listed_size():
    repo = default_registry().named_repo("meta-llama/Meta-Llama-3.1-405B-Instruct-FP8")[1]
    assert repo.gb == 410.14 and "meta-llama/Llama-3.1-405B-Instruct-FP8" in repo.source


def test_a_publisher_under_its_former_name_keeps_the_listed_size():
    repo = default_registry().named_repo("neuralmagic/Mistral-Small-24B-Instruct-2501-FP8-Dynamic")[1]
    assert (repo.quant, repo.gb) == ("fp8_dynamic", 24.93)


def test_read_repo_gives_the_format_a_question_sizes():
    reading = read_repo("Qwen/Qwen2.5-72B-Instruct-AWQ", default_registry())
    assert (reading.model.id, reading.checkpoint, reading.quant, reading.precision) == (
        "qwen2.5-72b", "Qwen/Qwen2.5-72B-Instruct-AWQ", "awq", "int4")
    fp8 = read_repo("meta-llama/Meta-Llama-3.1-405B-Instruct-FP8", default_registry())
    assert fp8.quant == "fp8_dynamic"  # Meta's per-channel FP8 is the FP8-dynamic format row
    gguf = read_repo("bartowski/Qwen2.5-Coder-32B-Instruct-GGUF", default_registry())
    assert gguf.gguf and gguf.quant is None and gguf.checkpoint == "bartowski/Qwen2.5-Coder-32B-Instruct-GGUF"


# -- the parser, in English and German ----------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "How much VRAM for deepseek-ai/DeepSeek-R1-0528-Qwen3-8B on an L4?",
    "Wie viel VRAM braucht deepseek-ai/DeepSeek-R1-0528-Qwen3-8B auf einer L4?",
])
def test_the_distill_is_never_its_teacher(text):
    result = parse(text, VOCABULARY)
    assert result.request is not None and result.request.model == "deepseek-r1-0528-qwen3-8b"
    assert result.request.ignored == [] and result.request.checkpoint is None


def test_without_the_distill_in_the_registry_it_is_a_model_nobody_knows():
    entries = [entry for entry in load_entries() if entry["id"] != "deepseek-r1-0528-qwen3-8b"]
    vocabulary = Vocabulary.of_catalog(CATALOG, build_registry(entries))
    result = parse("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B on an L4", vocabulary)
    assert result.request is not None and result.request.model is None and result.request.params_b == 8
    assert any(note.code == "unknown_model_sized" for note in result.request.assumed)
    assert result.hub_candidate == "deepseek-ai/DeepSeek-R1-0528-Qwen3-8B"  # the Hub may still know it


@pytest.mark.parametrize("text", [
    "Qwen/Qwen2.5-72B-Instruct-AWQ on 2x A40 with 32k context",
    "Qwen/Qwen2.5-72B-Instruct-AWQ auf zwei A40 mit 32k Kontext",
])
def test_a_quantized_repo_in_a_question_is_that_checkpoint(text):
    request = parse(text, VOCABULARY).request
    assert (request.model, request.quant, request.precision, request.checkpoint) == (
        "qwen2.5-72b", "awq", "int4", "Qwen/Qwen2.5-72B-Instruct-AWQ")
    assert (request.card, request.gpu_count, request.context_tokens, request.ignored) == ("a40", 2, 32768, [])


def test_a_slash_between_sizes_is_no_repo():
    request = parse("llama-3.1-70b/405b int4").request
    assert request.model == "llama-3.1-70b" and request.checkpoint is None


def test_a_repo_of_a_model_and_format_words_only_keeps_them_for_the_precision():
    request = parse("RedHatAI/Meta-Llama-3.1-70B-Instruct-quantized.w8a8 on an H100", VOCABULARY).request
    assert (request.model, request.precision, request.checkpoint, request.ignored) == (
        "llama-3.1-70b", "int8", None, [])


def test_a_gguf_repo_takes_the_type_the_question_names():
    request = parse("unsloth/Qwen3-8B-GGUF:Q5_K_M at 16k").request
    assert (request.model, request.quant, request.checkpoint) == ("qwen3-8b", "q5_k_m", "unsloth/Qwen3-8B-GGUF")
    assert parse("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF").request.quant == "q4_k_m"  # the usual download


def test_a_followup_keeps_the_checkpoint_and_a_format_change_leaves_it():
    request = parse("Qwen/Qwen2.5-72B-Instruct-AWQ on 2x A40", VOCABULARY).request
    kept = request_from_json(request_to_json(request))
    assert kept is not None and kept.checkpoint == "Qwen/Qwen2.5-72B-Instruct-AWQ"
    fp8 = SizeRequest(model="qwen2.5-72b", precision="fp8", checkpoint="Qwen/Qwen2.5-72B-Instruct-AWQ")
    answer = build_answer(fp8, CATALOG)
    assert answer.resolved is not None and answer.resolved.checkpoint is None
    assert "AWQ" not in answer.to_json()["serving"]["command"]


# -- cardfit ask and cardfit size --model: one path ---------------------------------------------------------

QUOTED = [
    # repo, model, quant, the repo's listed size (None: sized by the format's bits)
    ("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B", "deepseek-r1-0528-qwen3-8b", None, None),
    ("Qwen/Qwen2.5-72B-Instruct-AWQ", "qwen2.5-72b", "awq", 41.6),
    ("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", "llama-3.3-70b", "fp8_dynamic", None),
    ("meta-llama/Meta-Llama-3.1-405B-Instruct-FP8", "llama-3.1-405b", "fp8_dynamic", 410.14),
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8", "qwen3-coder-30b-a3b", "fp8_block", None),
    ("Qwen/Qwen2.5-Coder-32B-Instruct-AWQ", "qwen2.5-coder-32b", "awq", 19.33),
]


@pytest.mark.parametrize("repo,model,quant,gb", QUOTED)
def test_ask_and_size_model_read_a_repo_alike(capsys, repo, model, quant, gb):
    asked, sized = ask_json(capsys, repo), size_json(capsys, "--model", repo)
    for data in (asked, sized):
        request = data["request"]
        assert (request["model"], request["quant"], request["hf_id"]) == (model, quant, repo)
        assert data["serving"]["command"].startswith(f"vllm serve {repo} ")
        assert "--quantization" not in data["serving"]["command"]  # a published checkpoint, not made while loading
        if gb is not None:
            assert weights_gb(data) == gb and data["serving"]["weights_gb"] == pytest.approx(gb)
    assert asked["requirement"] == sized["requirement"] and asked["fit"] == sized["fit"]


def test_the_distill_is_sized_as_the_8b_it_is(capsys):
    data = ask_json(capsys, "deepseek-ai/DeepSeek-R1-0528-Qwen3-8B")
    assert data["request"]["params_b"] < 9 and data["fit"]["count"] == 1 and data["fit"]["vram_gb"] <= 48


def test_the_answer_says_which_checkpoint_it_sized(capsys):
    assert main(["ask", "Qwen/Qwen2.5-72B-Instruct-AWQ on 2x A40"]) == 0
    assert "Qwen/Qwen2.5-72B-Instruct-AWQ: the AWQ checkpoint of Qwen2.5 72B, 41.6 GB" in capsys.readouterr().out
    assert main(["size", "--model", "Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8", "--lang", "de"]) == 0
    assert ("Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8: der FP8 block-Checkpoint von Qwen3-Coder 30B-A3B Instruct, "
            "31,2 GB") in capsys.readouterr().out
    # a listed repo without a size (Gated DeltaNet layers are outside the layout arithmetic): the format's bits
    assert main(["size", "--model", "Qwen/Qwen3-Next-80B-A3B-Instruct-FP8", "--lang", "de"]) == 0
    assert ("Qwen/Qwen3-Next-80B-A3B-Instruct-FP8: der FP8 block-Checkpoint von Qwen3-Next 80B-A3B, nach "
            "den Bits des Formats gerechnet") in capsys.readouterr().out


def test_size_model_awq_with_tp_2_is_the_awq_checkpoint_on_two_gpus(capsys):
    data = size_json(capsys, "--model", "Qwen/Qwen2.5-72B-Instruct-AWQ", "--tp", "2")
    assert data["request"]["quant"] == "awq" and weights_gb(data) == 41.6
    assert data["serving"]["tp"] == 2 and data["serving"]["weights_gb_per_gpu"] < 25
    assert data["serving"]["command"].startswith("vllm serve Qwen/Qwen2.5-72B-Instruct-AWQ --tensor-parallel-size 2")


def test_size_model_quant_flag_wins_over_the_repo(capsys):
    data = size_json(capsys, "--model", "Qwen/Qwen2.5-72B-Instruct-AWQ", "--quant", "gptq")
    assert data["request"]["quant"] == "gptq"
    assert data["serving"]["command"].startswith("vllm serve Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4 ")


def test_int4_names_the_published_awq_repo_not_bitsandbytes(capsys):
    data = ask_json(capsys, "Qwen2.5-Coder-32B int4 on an L40S")
    assert data["serving"]["command"].startswith("vllm serve Qwen/Qwen2.5-Coder-32B-Instruct-AWQ ")
    assert "bitsandbytes" not in data["serving"]["command"]


def test_a_gguf_repo_launches_llama_server_with_its_type(capsys):
    for data in (ask_json(capsys, "bartowski/Qwen2.5-Coder-32B-Instruct-GGUF q5_k_m"),
                 size_json(capsys, "--model", "bartowski/Qwen2.5-Coder-32B-Instruct-GGUF", "--quant", "q5_k_m")):
        assert data["request"]["quant"] == "q5_k_m"
        command = data["serving"]["command"]
        assert command.startswith("llama-server -hf bartowski/Qwen2.5-Coder-32B-Instruct-GGUF:Q5_K_M ")
    assert main(["ask", "bartowski/Qwen2.5-Coder-32B-Instruct-GGUF q5_k_m"]) == 0
    assert "bartowski/Qwen2.5-Coder-32B-Instruct-GGUF: the Q5_K_M file of Qwen2.5 Coder 32B" in capsys.readouterr().out
    bare = size_json(capsys, "--model", "bartowski/Qwen2.5-Coder-32B-Instruct-GGUF")
    assert bare["request"]["quant"] == "q4_k_m" and ":Q4_K_M" in bare["serving"]["command"]


def test_a_bnb_repo_is_loaded_as_published(capsys):
    data = ask_json(capsys, "unsloth/Qwen2.5-Coder-32B-Instruct-bnb-4bit")
    assert data["request"]["quant"] == "bnb_nf4" and weights_gb(data) == 19.21
    assert data["serving"]["command"].startswith("vllm serve unsloth/Qwen2.5-Coder-32B-Instruct-bnb-4bit ")


# -- through the real Application: a chat question, inline and /quote ---------------------------------------

@pytest.fixture
def settings(tmp_path):
    return load_settings(bot_token=TOKEN, db=str(tmp_path / "cardfit.sqlite3"), staff_ids=f"{STAFF}",
                         topup_secret="topup-key-for-tests", rate_limit_messages=50)


def sent_to(bot: Harness, chat_id: int) -> list[dict]:
    return [c.params for c in bot.request.sent("sendMessage") if c.params["chat_id"] == chat_id]


async def test_quote_and_inline_size_the_awq_repo(settings):
    async with Harness(settings) as bot:
        await bot.send(STAFF, "/quote Qwen/Qwen2.5-72B-Instruct-AWQ on 2x A40")
        quoted = sent_to(bot, STAFF)[-1]["text"]
        assert "AWQ" in quoted and "2x A40" in quoted and "150" not in quoted
        await bot.inline(CUSTOMER, "deepseek-ai/DeepSeek-R1-0528-Qwen3-8B")
        text = bot.request.sent("answerInlineQuery")[-1].params["results"][0]["input_message_content"]["message_text"]
        assert "R1-0528-Qwen3-8B" in text and "8x" not in text and "Qwen3-8B'" not in text


async def test_the_quote_deep_link_answers_the_same_checkpoint(settings):
    async with Harness(settings) as bot:
        await bot.send(STAFF, "/quote Qwen/Qwen2.5-72B-Instruct-AWQ on 2x A40")
        quoted = sent_to(bot, STAFF)[-1]["text"]
        payload = quoted.rsplit("start=", 1)[1].split('"')[0].split("<")[0].strip()
        assert payload.endswith("H0") and len(payload) <= 64
        await bot.send(CUSTOMER, f"/start {payload}")
        answer = sent_to(bot, CUSTOMER)[-1]["text"]
        assert "Qwen/Qwen2.5-72B-Instruct-AWQ: the AWQ checkpoint of Qwen2.5 72B, 41.6 GB" in answer


def test_a_payload_carries_a_listed_checkpoint_by_its_place():
    request = SizeRequest(model="qwen2.5-coder-32b", precision="int4", quant="awq",
                          checkpoint="Qwen/Qwen2.5-Coder-32B-Instruct-AWQ")
    assert encode_request(request).endswith("H0")
    assert decode_request(encode_request(request)).checkpoint == "Qwen/Qwen2.5-Coder-32B-Instruct-AWQ"
    unlisted = SizeRequest(model="llama-3.3-70b", quant="nvfp4", checkpoint="nvidia/Llama-3.3-70B-Instruct-FP4")
    assert "H" not in encode_request(unlisted)  # not carried: the format names the registry's repo, if any
    with pytest.raises(PayloadError):
        decode_request("Mqwen2_5-coder-32bFawqH99")


async def test_a_chat_question_in_german_launches_the_named_repo(settings):
    async with Harness(settings) as bot:
        await bot.send(CUSTOMER, "Reicht eine L40S für RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic?",
                       language_code="de")
        answer = sent_to(bot, CUSTOMER)[-1]
        named = "RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic: der FP8-dynamic-Checkpoint von Llama 3.3 70B"
        assert named in answer["text"]
        launch = [b for row in answer["reply_markup"]["inline_keyboard"] for b in row if "🚀" in b["text"]
                  or "Start" in b["text"] or "Launch" in b["text"]]
        assert launch
        await bot.press(CUSTOMER, launch[0]["callback_data"])
        shown = bot.request.sent("editMessageText") + bot.request.sent("sendMessage")
        assert any("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic" in call.params.get("text", "") for call in shown)


async def test_a_followup_keeps_the_named_checkpoint(settings):
    async with Harness(settings) as bot:
        await bot.send(CUSTOMER, "nvidia/Llama-3.3-70B-Instruct-FP4 on 2x H100")
        await bot.send(CUSTOMER, "and at 32k?")
        answer = sent_to(bot, CUSTOMER)[-1]["text"]
        assert "32,768 tokens" in answer
        assert "nvidia/Llama-3.3-70B-Instruct-FP4: the NVFP4 checkpoint of Llama 3.3 70B" in answer
