"""The registry lists the published quantized checkpoints of the families people run (Qwen3, Qwen2.5-VL, Llama
3.1 / 3.3 / 4, Mistral Small 3.x, Gemma 3, Phi-4, the R1 distills): a question naming one of them, in `cardfit ask`
or `cardfit size --model`, is sized as that checkpoint and launches it by its repo."""
from __future__ import annotations

import json

import pytest

from bot.cli.main import main
from engine.models.registry import default_registry

# repo, registry model, format, the listed size in GB (None: listed without one, sized by the format's bits)
FAMILIES = [
    ("Qwen/Qwen3-14B-AWQ", "qwen3-14b", "awq", 9.98),
    ("Qwen/Qwen3-4B-FP8", "qwen3-4b", "fp8_block", 4.41),
    ("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "qwen3-235b-a22b-2507", "fp8_block", 236.45),
    ("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "qwen3-coder-480b-a35b", "fp8_block", 482.2),
    ("Qwen/Qwen3-Next-80B-A3B-Instruct-FP8", "qwen3-next-80b-a3b", "fp8_block", None),
    ("Qwen/QwQ-32B-AWQ", "qwq-32b", "awq", 19.33),
    ("Qwen/Qwen3.6-27B-FP8", "qwen3.6-27b", "fp8_block", None),
    ("Qwen/Qwen3.5-35B-A3B-FP8", "qwen3.5-35b-a3b", "fp8_block", None),
    ("Qwen/Qwen2.5-VL-7B-Instruct-AWQ", "qwen2.5-vl-7b", "awq", 6.92),
    ("Qwen/Qwen2.5-VL-72B-Instruct-AWQ", "qwen2.5-vl-72b", "awq", 43.01),
    ("hugging-quants/Meta-Llama-3.1-405B-Instruct-AWQ-INT4", "llama-3.1-405b", "awq", 217.08),
    ("RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8", "llama-3.1-8b", "fp8", 9.08),
    ("RedHatAI/Llama-3.3-70B-Instruct-quantized.w4a16", "llama-3.3-70b", "w4a16", 39.5),
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "llama-4-maverick", "fp8_dynamic", None),
    ("RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-FP8-dynamic", "mistral-small-3.1", "fp8_dynamic", 25.81),
    ("RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-quantized.w4a16", "mistral-small-3.1", "w4a16", 15.03),
    ("RedHatAI/Mistral-Small-3.2-24B-Instruct-2506-FP8", "mistral-small-3.2", "fp8", 25.79),
    ("TheBloke/Mixtral-8x7B-Instruct-v0.1-AWQ", "mixtral-8x7b", "awq", 24.65),
    ("RedHatAI/gemma-3-27b-it-FP8-dynamic", "gemma-3-27b", "fp8_dynamic", 29.28),
    ("RedHatAI/phi-4-FP8-dynamic", "phi-4", "fp8_dynamic", 15.7),
    ("casperhansen/deepseek-r1-distill-qwen-32b-awq", "deepseek-r1-distill-qwen-32b", "awq", 19.33),
]


def as_json(capsys, *argv: str) -> dict:
    assert main([*argv]) == 0
    return json.loads(capsys.readouterr().out)


def weights_gb(data: dict) -> float:
    return next(c["gb"] for c in data["requirement"]["components"] if c["name"] == "weights")


@pytest.mark.parametrize("repo,model,quant,gb", FAMILIES, ids=[row[0] for row in FAMILIES])
def test_a_published_checkpoint_is_sized_and_launched_as_itself(capsys, repo, model, quant, gb):
    asked = as_json(capsys, "ask", "--json", repo)
    sized = as_json(capsys, "size", "--json", "--model", repo)
    for data in (asked, sized):
        request = data["request"]
        assert (request["model"], request["quant"], request["hf_id"]) == (model, quant, repo)
        command = data["serving"]["command"]
        assert command.startswith(f"vllm serve {repo} ") and "--quantization" not in command
        if gb is not None:
            assert weights_gb(data) == gb and data["serving"]["weights_gb"] == pytest.approx(gb)
    assert asked["requirement"] == sized["requirement"] and asked["fit"] == sized["fit"]


@pytest.mark.parametrize("repo,quant", [("RedHatAI/gemma-4-31B-it-FP8-Dynamic", "fp8_dynamic"),
                                        ("RedHatAI/gemma-4-31B-it-FP8-block", "fp8_block"),
                                        ("RedHatAI/gemma-4-26B-A4B-it-NVFP4", "nvfp4"),
                                        ("neuralmagic/Llama-3.2-11B-Vision-Instruct-FP8-dynamic", "fp8_dynamic")])
def test_a_checkpoint_without_a_serving_check_is_sized_in_its_own_format(capsys, repo, quant):
    asked = as_json(capsys, "ask", "--json", repo)
    sized = as_json(capsys, "size", "--json", "--model", repo)
    for data in (asked, sized):  # Gemma 4 and Llama 3.2 Vision have no serving check yet: the size and its note
        assert (data["request"]["quant"], data["request"]["hf_id"]) == (quant, repo)
    assert asked["requirement"] == sized["requirement"]
    assert main(["size", "--model", repo]) == 0
    assert f"{repo}: the " in capsys.readouterr().out


def test_the_answer_names_the_checkpoint_and_its_size_in_english_and_german(capsys):
    assert main(["ask", "Qwen/Qwen2.5-VL-7B-Instruct-AWQ on an L4"]) == 0
    assert "Qwen/Qwen2.5-VL-7B-Instruct-AWQ: the AWQ checkpoint of Qwen2.5-VL 7B, 6.9 GB" in capsys.readouterr().out
    assert main(["ask", "Wie viel VRAM braucht RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-FP8-dynamic auf einer "
                        "L40S?"]) == 0
    assert ("RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-FP8-dynamic: der FP8-dynamic-Checkpoint von Mistral Small "
            "3.1 24B (2503), 25,8 GB") in capsys.readouterr().out


def test_a_format_question_launches_the_publishers_checkpoint(capsys):
    awq = as_json(capsys, "ask", "--json", "qwen3 14b awq on an L4")
    assert awq["serving"]["command"].startswith("vllm serve Qwen/Qwen3-14B-AWQ ")
    int4 = as_json(capsys, "ask", "--json", "qwen2.5-vl 72b int4 on an A100")
    assert int4["serving"]["command"].startswith("vllm serve Qwen/Qwen2.5-VL-72B-Instruct-AWQ ")


def test_every_listed_repo_names_its_model_and_itself():
    registry = default_registry()
    for model in registry:
        for repo in model.quantized:
            if repo.quant.startswith("gguf_") or repo.hf_id == model.hf_id:
                continue  # a GGUF file is named with its type; a native release is the model itself
            named = registry.named_repo(repo.hf_id)
            assert named is not None and named[0].id == model.id, repo.hf_id
            assert named[1] == repo, repo.hf_id


def test_every_listed_repo_says_where_it_and_its_size_come_from():
    for model in default_registry():
        for repo in model.quantized:
            assert repo.source, repo.hf_id
            if repo.gb is not None:
                assert repo.gb_kind in ("published", "derived"), repo.hf_id
