"""Catalog loading: both bundled catalogs validate; a broken file names the file, the card and the field."""
from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
import yaml

from catalog.loader import MAX_CATALOG_BYTES, CatalogError, load_catalog, parse_catalog, parse_catalog_bytes
from catalog.schema import LIMITS, KvPrecision, Precision
from tests.test_cli import run_cli

BUNDLED = Path(__file__).resolve().parents[1] / "catalog" / "data"


def _broken(tmp_path, mutate) -> Path:
    data = yaml.safe_load((BUNDLED / "gpurenthub.yaml").read_text())
    mutate(data)
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_bundled_catalogs_load():
    rh = load_catalog("gpurenthub")
    wc = load_catalog("gpuwithcrypto")
    assert len(rh.catalog.cards) == 15 and len(wc.catalog.cards) == 7
    assert rh.catalog.sizing.policy == "breakdown" and rh.catalog.selection.policy == "cheapest"
    assert wc.catalog.sizing.policy == "headroom" and wc.catalog.selection.policy == "fewest"
    assert wc.catalog.sizing.headroom_factor == 1.2
    assert [d.percent for d in rh.catalog.volume_discounts] == [5, 8, 10]
    assert rh.catalog.coins == ("BTC", "ETH", "USDT", "USDC", "XMR", "SOL", "LTC")
    assert set(wc.catalog.coins) == set(rh.catalog.coins)
    assert len(rh.sha256) == 64


def test_topup_templates_are_example_domains():
    for name in ("gpurenthub", "gpuwithcrypto"):
        template = load_catalog(name).catalog.topup.url_template
        assert ".example.com/" in template and "{amount}" in template


def test_negative_vram_names_file_card_and_field(tmp_path):
    path = _broken(tmp_path, lambda d: d["cards"][3].update(vram_gb=-80))
    with pytest.raises(CatalogError) as info:
        load_catalog(str(path))
    message = str(info.value)
    assert str(path) in message and "card 'h100-sxm' (cards[3])" in message and "vram_gb" in message


def test_missing_price_in_monthly_catalog(tmp_path):
    path = _broken(tmp_path, lambda d: d["cards"][0].pop("price_monthly_usd"))
    with pytest.raises(CatalogError, match="card mi300x: price_monthly_usd is required"):
        load_catalog(str(path))


def test_unknown_field_and_duplicate_id(tmp_path):
    path = _broken(tmp_path, lambda d: d["cards"][1].update(vramm_gb=3))
    with pytest.raises(CatalogError, match=r"card 'b200' \(cards\[1\]\), field vramm_gb: Extra inputs"):
        load_catalog(str(path))
    path = _broken(tmp_path, lambda d: d["cards"][2].update(id="b200"))
    with pytest.raises(CatalogError, match="card id 'b200' appears twice"):
        load_catalog(str(path))


def test_bad_topup_template(tmp_path):
    path = _broken(tmp_path, lambda d: d["topup"].update(url_template="https://x.example.com/?a={amt}"))
    with pytest.raises(CatalogError, match="unknown placeholder"):
        load_catalog(str(path))


def test_not_yaml_and_missing_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("cards: [\n  - id: x\n  bad: indent")
    with pytest.raises(CatalogError, match="not valid YAML .line"):
        load_catalog(str(path))
    with pytest.raises(CatalogError, match="no such catalog file"):
        load_catalog(str(tmp_path / "nope.yaml"))
    with pytest.raises(CatalogError, match="expected a mapping"):
        parse_catalog("- just\n- a list\n", "list.yaml")


def test_cli_catalog_check(tmp_path, capsys):
    code, out, _ = run_cli(capsys, ["catalog", "check", str(BUNDLED / "gpurenthub.yaml")])
    assert code == 0 and out.strip() == "ok: GPU Rent Hub, 15 cards"
    path = _broken(tmp_path, lambda d: d["cards"][0].update(bandwidth_gbps=0))
    code, out, _ = run_cli(capsys, ["catalog", "check", str(path)])
    assert code == 2 and "card 'mi300x' (cards[0]), field bandwidth_gbps" in out


# -- a catalog that passes the check can be served (bounded, finite, strict numbers; safe templates) --

def _check_fails(tmp_path, mutate, needle: str) -> str:
    path = _broken(tmp_path, mutate)
    with pytest.raises(CatalogError) as info:
        load_catalog(str(path))
    message = str(info.value)
    assert message.startswith(f"{path}: ") and needle in message and "\n" not in message, message
    return message


@pytest.mark.parametrize("mutate, needle", [
    (lambda d: d["cards"][0].update(price_monthly_usd=float("inf")), "price_monthly_usd: Input should be a finite"),
    (lambda d: d["cards"][0].update(bandwidth_gbps=float("inf")), "bandwidth_gbps: Input should be a finite"),
    (lambda d: d["cards"][2].update(interconnect_gbps=float("nan")), "interconnect_gbps: Input should be a finite"),
    (lambda d: d["sizing"].update(overhead_gb=float("inf")), "sizing.overhead_gb: Input should be a finite"),
    (lambda d: d["volume_discounts"][0].update(percent=float("nan")), "percent: Input should be a finite"),
])
def test_infinite_and_nan_numbers_are_refused(tmp_path, mutate, needle):
    _check_fails(tmp_path, mutate, needle)


@pytest.mark.parametrize("mutate, needle", [
    (lambda d: d["cards"][0].update(price_monthly_usd=1e-300), "price_monthly_usd: Input should be greater than"),
    (lambda d: d["cards"][0].update(price_monthly_usd=1e9), "price_monthly_usd: Input should be less than"),
    (lambda d: d["cards"][0].update(vram_gb=0.001), "vram_gb: Input should be greater than or equal to 1"),
    (lambda d: d["cards"][0].update(bandwidth_gbps=1e-300), "bandwidth_gbps: Input should be greater than"),
    (lambda d: d["cards"][2].update(interconnect_gbps=1e30), "interconnect_gbps: Input should be less than"),
    (lambda d: d["cards"][0].update(stock={"DFW-1": 10**30}), "stock.DFW-1: Input should be less than"),
    (lambda d: d["cards"][0].update(stock={"DFW-1": -1}), "stock.DFW-1: Input should be greater than"),
    (lambda d: d.update(hours_per_month=10**6), "hours_per_month: Input should be less than or equal to 744"),
    (lambda d: d.update(minimum_term_hours=10**6), "minimum_term_hours: Input should be less than"),
    (lambda d: d["volume_discounts"][0].update(percent=99.99), "percent: Input should be less than or equal to 90"),
    (lambda d: d["sizing"].update(default_context_tokens=10**12), "default_context_tokens: Input should be less"),
    (lambda d: d["sizing"].update(default_batch=10**6), "default_batch: Input should be less"),
    (lambda d: d["sizing"].update(headroom_factor=1e300), "headroom_factor: Input should be less"),
    (lambda d: d["sizing"].update(default_precision="fp4"), "default_precision: Input should be"),
    (lambda d: d["sizing"].update(default_kv_precision="int4"), "default_kv_precision: Input should be"),
    (lambda d: d["selection"].update(max_gpus_per_host=10**6), "max_gpus_per_host: Input should be less"),
    (lambda d: d.update(coins=["BTC", "DOGE-ON-SOLANA"], default_coin="BTC"), "field coins.1: String should match"),
    (lambda d: d["cards"][0].update(notes="n" * 100_000), "notes: String should have at most 500"),
    (lambda d: d.update(cards=d["cards"] * 20), "cards: Tuple should have at most 200"),
])
def test_numbers_and_texts_are_bounded(tmp_path, mutate, needle):
    _check_fails(tmp_path, mutate, needle)


@pytest.mark.parametrize("mutate, needle", [
    (lambda d: d["cards"][0].update(vram_gb=True), "vram_gb: Input should be a valid number"),
    (lambda d: d["cards"][0].update(price_monthly_usd=True), "price_monthly_usd: Input should be a valid number"),
    (lambda d: d["cards"][0].update(stock={"DFW-1": True}), "stock.DFW-1: Input should be a valid integer"),
    (lambda d: d["cards"][0].update(set_sizes=[True, 8]), "set_sizes.0: Input should be a valid integer"),
    (lambda d: d.update(hours_per_month=True), "hours_per_month: Input should be a valid integer"),
    (lambda d: d["cards"][0].update(fp8=1), "fp8: Input should be a valid boolean"),
    (lambda d: d["cards"][0].update(vram_gb="80"), "vram_gb: Input should be a valid number"),
])
def test_booleans_are_not_numbers_nor_numbers_booleans(tmp_path, mutate, needle):
    _check_fails(tmp_path, mutate, needle)


def test_a_yaml_int_for_a_float_field_is_still_a_float(tmp_path):
    path = _broken(tmp_path, lambda d: d["cards"][0].update(vram_gb=192, bandwidth_gbps=5300.5))
    card = load_catalog(str(path)).catalog.cards[0]
    assert card.vram_gb == 192 and isinstance(card.vram_gb, float) and card.bandwidth_gbps == 5300.5


@pytest.mark.parametrize("template, needle", [
    ("https://x.example.com/?a={amount:d}", "{amount} takes no format spec"),
    ("https://x.example.com/?a={amount:>300000000}", "{amount} takes no format spec"),
    ("https://x.example.com/?a={amount!r}", "{amount} takes no format spec or conversion"),
    ("https://x.example.com/{}?a={amount}", "unknown placeholder {}"),
    ("https://x.example.com/{0}?a={amount}", "unknown placeholder {0}"),
    ("https://x.example.com/?a={amount.real}", "unknown placeholder {amount.real}"),
    ("https://x.example.com/?a={amount}&c={coin[0]}", "unknown placeholder {coin[0]}"),
    ("https://x.example.com/?a={amount}&b={", "Single '{' encountered"),
    ("https://x.example.com/?a={amount}&n=%7Bcoin%7D", "percent-encoded braces"),
    ("https://x.example.com/?a={amount}&n=a b", "' ' at position"),
    ('https://x.example.com/?a={amount}"onclick="x', "'\"' at position"),
    ("https://x.example.com/?a={amount}&p=" + "x" * 600, "String should have at most 512 characters"),
    ("http://x.example.com/?a={amount}", "must be an https:// URL"),
])
def test_topup_templates_only_plain_placeholders_and_a_bounded_url(tmp_path, template, needle):
    message = _check_fails(tmp_path, lambda d: d["topup"].update(url_template=template), needle)
    assert "field topup.url_template: " in message


def _bundled_text() -> str:
    return (BUNDLED / "gpurenthub.yaml").read_text(encoding="utf-8")


def test_updated_is_a_real_date(tmp_path):
    path = tmp_path / "dates.yaml"
    path.write_text(_bundled_text().replace('updated: "2026-09-01"', 'updated: "2026-13-45"'))
    with pytest.raises(CatalogError, match=r"field updated: '2026-13-45' is not a date \(write YYYY-MM-DD\)"):
        load_catalog(str(path))
    path.write_text(_bundled_text().replace('updated: "2026-09-01"', "updated: 2026-13-45"))  # YAML's own date
    with pytest.raises(CatalogError, match=r"YAML \(line 7, column 10\): ValueError: month must be in 1\.\.12"):
        load_catalog(str(path))
    path.write_text(_bundled_text().replace('updated: "2026-09-01"', "updated: 2026-09-01"))
    assert load_catalog(str(path)).catalog.updated == "2026-09-01"  # an unquoted real date is fine


@pytest.mark.parametrize("text, needle", [
    ("cards: " + "[" * 5000 + "]" * 5000 + "\n", "not valid YAML: nested too deeply"),
    ("cards: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n", "not valid YAML: nested too deeply"),
    ("hours_per_month: " + "9" * 5000 + "\n", "not valid YAML (line 1, column 18): ValueError: Exceeds the limit"),
    ("x: !!python/object:os.system ls\n", "could not determine a constructor"),
    ("x: !!binary a\n", "not valid YAML (line 1, column 4): failed to decode base64"),
    ("x: !!bool maybe\n", "not valid YAML (line 1, column 4): KeyError: 'maybe'"),
    ("x: !!timestamp 2026-02-30\n", "not valid YAML (line 1, column 4): ValueError: day is out of range"),
    ("? [a, b]\n: 1\n", "found unhashable key"),
])
def test_hostile_yaml_is_one_catalog_error_naming_the_file(text, needle):
    with pytest.raises(CatalogError) as info:
        parse_catalog(text, "hostile.yaml")
    message = str(info.value)
    assert message.startswith("hostile.yaml: ") and needle in message and "\n" not in message, message


def test_parse_catalog_bytes_is_strict_utf8_with_a_size_cap(tmp_path):
    raw = (BUNDLED / "gpurenthub.yaml").read_bytes()
    assert parse_catalog_bytes(raw, "rh.yaml") == load_catalog("gpurenthub").catalog
    latin1 = _bundled_text().replace("provider: GPU Rent Hub", "provider: GPU Rent Hüb").encode("latin-1", "replace")
    with pytest.raises(CatalogError, match=r"^latin1\.yaml: not UTF-8 text \(byte \d+: b'\\xfc'\)$"):
        parse_catalog_bytes(latin1, "latin1.yaml")
    path = tmp_path / "latin1.yaml"
    path.write_bytes(latin1)  # the start-up path refuses it the same way (one loader)
    with pytest.raises(CatalogError, match="not UTF-8 text"):
        load_catalog(str(path))
    too_big = raw + b"#" * MAX_CATALOG_BYTES
    with pytest.raises(CatalogError, match=r"^big\.yaml: too large \([0-9,]+ bytes; a catalog is at most 1,048,576"):
        parse_catalog_bytes(too_big, "big.yaml")
    path.write_bytes(too_big)
    with pytest.raises(CatalogError, match="too large"):
        load_catalog(str(path))


def test_schema_precisions_and_limits_are_the_engines():
    from engine.parse.errors import MAX_GPU_COUNT
    from engine.sizing.rule import KV_PRECISION_BYTES, PRECISION_BYTES
    from engine.sizing.sequence import MAX_BATCH, MAX_CONTEXT_TOKENS

    assert set(get_args(Precision)) == set(PRECISION_BYTES)
    assert set(get_args(KvPrecision)) == set(KV_PRECISION_BYTES)
    assert LIMITS["context_tokens"][1] == MAX_CONTEXT_TOKENS and LIMITS["batch"][1] == MAX_BATCH
    assert LIMITS["set_size"][1] == MAX_GPU_COUNT
