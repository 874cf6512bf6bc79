"""`cardfit size` and friends: flags, JSON shape, exit codes, one-line errors on stderr."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot.cli.main import main

JSON_KEYS = {"request", "requirement", "fit", "reason", "alternatives", "topup_url", "error"}
FIT_KEYS = {"card", "count", "vram_gb", "spare_gb", "tight", "valid", "price", "decode_tokens_per_s"}


def run_cli(capsys, argv):
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def size_json(capsys, *argv):
    code, out, err = run_cli(capsys, ["size", "--json", *argv])
    return code, json.loads(out), err


def test_size_json_of_70b_int4_at_32k(capsys):
    code, data, _ = size_json(capsys, "--catalog", "gpurenthub", "--params", "70", "--precision", "int4",
                              "--context", "32768")
    assert code == 0 and set(data) >= JSON_KEYS and data["error"] is None
    assert round(data["requirement"]["total_gb"], 1) == 47.7
    assert [(c["name"], round(c["gb"], 1)) for c in data["requirement"]["components"]] == [
        ("weights", 35.0), ("kv_cache", 10.7), ("overhead", 2.0)]
    # The rule picks one A40; vLLM would not start there at 32k, so two lead (DESIGN.md, contract v3).
    assert set(data["rule_fit"]) >= FIT_KEYS and (data["rule_fit"]["card"], data["rule_fit"]["count"]) == ("a40", 1)
    assert data["rule_fit"]["price"] == {"hourly": pytest.approx(240 / 720), "monthly": 240.0, "currency": "USD"}
    assert set(data["fit"]) >= FIT_KEYS and (data["fit"]["card"], data["fit"]["count"]) == ("a40", 2)
    assert data["serving"]["starts"] is True
    assert data["request"]["context_tokens"] == 32768 and data["request"]["params_b"] == 70
    assert data["topup_url"].startswith("https://pay.gpurenthub.example.com/topup?amount=456.00&coin=USDT")


def test_model_flag_and_catalog_path(capsys):
    code, data, _ = size_json(capsys, "--catalog", "gpuwithcrypto", "--model", "llama-3.1-70b", "--precision", "fp8")
    assert code == 0 and data["fit"]["card"] == "h200" and data["request"]["model"] == "llama-3.1-70b"


def test_card_and_count_layout(capsys):
    code, data, _ = size_json(capsys, "--catalog", "gpuwithcrypto", "--model", "llama-3.1-70b",
                              "--card", "h100", "--count", "3")
    assert code == 0
    assert data["fit"]["valid"] is False and "attention heads" in data["fit"]["reason"]
    assert data["alternatives"][0]["card"] == "b200"


@pytest.mark.parametrize("argv,needle", [
    (["--params", "0"], "params 0B"),
    (["--params", "100001"], "out of range"),
    (["--params", "7", "--context", "0"], "context 0"),
    (["--params", "7", "--context", "16777217"], "context"),
    (["--params", "7", "--batch", "0"], "batch 0"),
    (["--params", "7", "--batch", "5000"], "batch"),
    (["--model", "gpt-9"], "unknown model"),
    (["--params", "7", "--precision", "fp3"], "unknown precision"),
    (["--params", "seven"], "not a number"),
    (["--params", "7", "--catalog", "/nonexistent.yaml"], "no such catalog"),
    (["--params", "7", "--region", "XYZ"], "unknown region 'XYZ'"),
    (["--params", "7", "--coin", "DOGE"], "does not take 'DOGE'"),
    (["--params", "7", "--catalog", "gpuwithcrypto", "--region", "DFW-1"], "publishes no regions"),
])
def test_bad_arguments_exit_2_with_error(capsys, argv, needle):
    code, out, err = run_cli(capsys, ["size", "--json", *argv])
    assert code == 2
    assert needle in json.loads(out)["error"]
    assert len(err.strip().splitlines()) == 1 and needle in err


def test_human_output(capsys):
    code, out, _ = run_cli(capsys, ["size", "--params", "7", "--precision", "bf16", "--card", "a40"])
    assert code == 0
    # The calibrated estimate leads; the bandwidth ceiling (696 GB/s / 14 GB = 50) is only in Details.
    assert "Yes" in out and "≈ 35 tokens/s for one stream (range 27–44, calibrated, vLLM)" in out and "<b>" not in out
    assert "Decode ceiling" not in out


def test_console_script_runs():
    result = subprocess.run([sys.executable, "-m", "bot.cli", "size", "--params", "70", "--json"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and json.loads(result.stdout)["fit"]["card"] == "mi300x"


def test_ask_human_and_json(capsys):
    code, out, _ = run_cli(capsys, ["ask", "70B at 4-bit, 32k context"])
    assert code == 0 and "Memory needed: 47.7 GB" in out and "1x A40" in out
    code, out, _ = run_cli(capsys, ["ask", "--json", "QLoRA Llama 3.1 70B"])
    data = json.loads(out)
    assert code == 0 and data["request"]["workload"] == "qlora" and data["fit"]["card"] == "a100-sxm"
    code, out, err = run_cli(capsys, ["ask", "hello"])
    assert code == 2 and "70B at 4-bit, 32k context" in out and "not a sizing question" in err
    code, out, err = run_cli(capsys, ["ask", "--json", "0B model"])
    assert code == 2 and "0B" in json.loads(out)["error"]


def test_ask_batch_one_line_per_input_line(monkeypatch, capsys):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("70B int4\nhello\n\n13B fp8 32k\nbatch 0 of 7B\n"))
    code, out, _ = run_cli(capsys, ["ask", "--json", "-"])
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(lines) == 5
    assert lines[0]["fit"]["card"] == "a40" and lines[1]["error"] and lines[2]["error"]
    assert lines[3]["request"]["context_tokens"] == 32768 and lines[4]["error"]


def test_announce_dry_run(tmp_path, monkeypatch, capsys):
    import asyncio
    import shutil

    import yaml

    from bot.store import Store
    from catalog.loader import load_catalog

    path = tmp_path / "catalog.yaml"
    shutil.copy(load_catalog("gpurenthub").path, path)
    monkeypatch.setenv("CARDFIT_DB", str(tmp_path / "a.sqlite3"))
    code, out, _ = run_cli(capsys, ["announce", "--dry-run", "--catalog", str(path)])
    assert code == 0 and "baseline" in out

    async def record_baseline():
        store = await Store.open(str(tmp_path / "a.sqlite3"))
        announcement = await store.begin_announcement("gpurenthub", "x" * 64, path.read_text(), "(baseline)")
        await store.mark_announcement_posted(announcement, [])
        await store.close()

    asyncio.run(record_baseline())
    data = yaml.safe_load(path.read_text())
    data["cards"][9]["price_monthly_usd"] = 250  # A40 240 -> 250
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    code, out, _ = run_cli(capsys, ["announce", "--dry-run", "--catalog", str(path)])
    assert code == 0 and "A40: $240 → $250/month (+4.2 %)" in out and "<b>" not in out


# -- nothing that passes the check breaks the service; what does not pass is one line, exit 2 --------

def _cli(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot.cli", *argv], input=stdin, capture_output=True, text=True,
                          timeout=120)


def _strict_json(line: str) -> dict:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in JSON: {line[:200]}")

    return json.loads(line, parse_constant=refuse)


_BUNDLED_RH = Path(__file__).resolve().parents[1] / "catalog" / "data" / "gpurenthub.yaml"
_HOSTILE_CATALOGS = {
    "deep.yaml": "cards: " + "[" * 5000 + "]" * 5000 + "\n",
    "bad_date.yaml": "updated: 2026-13-45\n",
    "huge_int.yaml": "hours_per_month: " + "9" * 5000 + "\n",
    "bool.yaml": "x: !!bool maybe\n",
    "format_spec.yaml": None,  # the bundled catalog with {amount:d}
    "inf_price.yaml": None,  # the bundled catalog with a .inf price
}


@pytest.mark.parametrize("name", sorted(_HOSTILE_CATALOGS))
def test_catalog_check_exits_2_with_one_line_for_a_hostile_file(tmp_path, name):
    text = _HOSTILE_CATALOGS[name]
    if text is None:
        text = _BUNDLED_RH.read_text(encoding="utf-8")
        text = (text.replace("amount={amount}", "amount={amount:d}") if name == "format_spec.yaml"
                else text.replace("price_monthly_usd: 1590", "price_monthly_usd: .inf"))
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    result = _cli("catalog", "check", str(path))
    assert result.returncode == 2, result.stderr[-500:]
    assert result.stdout.startswith(f"{path}: ") and result.stdout.count("\n") == 1, result.stdout
    assert "Traceback" not in result.stderr and result.stderr == ""


def test_catalog_check_refuses_latin1_as_the_start_does(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(_BUNDLED_RH.read_text(encoding="utf-8").replace("GPU Rent Hub\n", "GPU Rent Hüb\n", 1)
                     .encode("latin-1", "replace"))
    result = _cli("catalog", "check", str(path))
    assert result.returncode == 2 and "not UTF-8 text" in result.stdout and result.stdout.count("\n") == 1


def test_every_json_answer_is_strict_json_over_the_parser_corpus():
    corpus = yaml.safe_load((Path(__file__).resolve().parent / "parser_corpus.yaml").read_text(encoding="utf-8"))
    texts = [case["text"] for case in corpus["cases"]]
    texts += ["0.0000001B", "1e-306B", "5e-324b", "1e-310B on an H100", "0,0000001b in 2 GB", "100000B", "99999.99B"]
    texts = [text.replace("\n", " ") for text in texts]
    result = _cli("ask", "--json", "-", stdin="\n".join(texts) + "\n")
    assert result.returncode == 0, result.stderr[-500:]
    lines = result.stdout.splitlines()
    assert len(lines) == len(texts)
    answers = [_strict_json(line) for line in lines]
    for text, answer in zip(texts[-7:-2], answers[-7:-2], strict=True):
        assert answer["fit"] is None and "too small to size" in answer["error"], (text, answer)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e-310"])
def test_params_flag_non_finite_or_tiny_exits_2_with_strict_json(value):
    result = _cli("size", "--params", value, "--json")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert _strict_json(result.stdout)["error"]


def test_details_show_the_ceiling_prefill_and_first_token(capsys):
    code, out, _ = run_cli(capsys, ["size", "--params", "7", "--precision", "bf16", "--card", "a40", "--details"])
    assert code == 0
    assert "Decode ceiling: 50 tokens/s" in out and "first token after" in out


def test_json_speed_for_the_layout_with_a_prompt_and_a_target(capsys):
    """DESIGN.md contract v3: `speed` of the answer's layout; a 4-card layer split is no faster than one card."""
    code, out, _ = run_cli(capsys, ["size", "--params", "13", "--card", "rtx-a5000", "--count", "4",
                                    "--prompt-tokens", "1000", "--target-tok-s", "100", "--json"])
    assert code == 0
    speed = json.loads(out)["speed"]
    assert set(speed) >= {"engine", "decode_tok_s", "decode_tok_s_per_user", "aggregate_tok_s", "prefill_tok_s",
                          "ttft_s", "ceiling_decode_tok_s", "basis", "range"}
    assert speed["basis"] == "calibrated" and speed["prompt_tokens"] == 1000
    low, high = speed["range"]
    assert low < speed["decode_tok_s"] < high < speed["ceiling_decode_tok_s"]
    assert speed["decode_tok_s"] < 60  # the ceiling (4 x 768 GB/s / 26 GB) said 118
    assert speed["meets_target"] is False and speed["target_tok_s"] == 100
