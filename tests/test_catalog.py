"""Catalog loading: both bundled catalogs validate; a broken file names the file, the card and the field."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from catalog.loader import CatalogError, load_catalog, parse_catalog
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
