"""The prepared copies of the bundled data (catalog/bundled_yaml.py, written by `make install`) say exactly what
the YAML says, are used only while current, never load what is not data, are never written at run time, and keep
pydantic, PyYAML and the Hub off `cardfit ask`."""
from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import prepare
from catalog import bundled_yaml, loader, schema, validation
from catalog.bundled_yaml import bundled_files, load_bundled, load_bundled_file
from catalog.loader import BUNDLED, load_catalog
from tests.test_cli import run_cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def copies(tmp_path, monkeypatch):
    """An empty prepared-copy directory of this test's own."""
    monkeypatch.setattr(bundled_yaml, "COMPILED_DIR", tmp_path / "compiled")
    return tmp_path / "compiled"


def test_a_prepared_copy_is_the_yaml(copies):
    assert prepare.prepare() == len(bundled_files()) + len(BUNDLED)
    for path in bundled_files():
        from_yaml = load_bundled(path.read_text(encoding="utf-8"))
        assert bundled_yaml.read_copy(path.read_bytes()) is not None, path
        copied = load_bundled_file(path)
        assert copied == from_yaml, path
        assert pickle.dumps(copied) == pickle.dumps(from_yaml), path  # the same types too (1 is not 1.0)


def test_this_checkouts_copies_are_the_yaml():
    """What this checkout's catalog/_compiled/ holds (make install prepared it) is what the YAML gives now."""
    for path in bundled_files():
        assert load_bundled_file(path) == load_bundled(path.read_text(encoding="utf-8")), path


def test_reading_never_writes(copies, tmp_path):
    path = tmp_path / "data.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    assert load_bundled_file(path) == {"a": 1}
    for name in BUNDLED:
        assert load_catalog(name).catalog == load_catalog(name, compiled=False).catalog
    assert not copies.exists()


def test_a_changed_file_is_read_from_its_yaml(copies, tmp_path):
    path = tmp_path / "data.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    bundled_yaml.write_copy(path.read_bytes(), {"a": 1})
    path.write_text("a: 2\n", encoding="utf-8")
    assert load_bundled_file(path) == {"a": 2}


def test_a_broken_or_foreign_copy_is_ignored(copies):
    path = bundled_files()[0]
    raw = path.read_bytes()
    copy = bundled_yaml.write_copy(raw, load_bundled(raw.decode("utf-8")))
    copy.write_bytes(b"not a pickle")
    assert load_bundled_file(path) == load_bundled(raw.decode("utf-8"))

    class Boom:
        def __reduce__(self):
            return (print, ("unpickled code ran",))

    copy.write_bytes(pickle.dumps(Boom()))
    assert bundled_yaml.read_copy(raw) is None  # builtins.print is no data
    assert load_bundled_file(path) == load_bundled(raw.decode("utf-8"))


@pytest.mark.parametrize("name", BUNDLED)
def test_a_prepared_catalog_is_the_strictly_validated_one(copies, name, monkeypatch):
    strict = load_catalog(name, compiled=False).catalog
    prepare.prepare()
    monkeypatch.setattr(loader, "parse_catalog_bytes", None)  # the copy is read, nothing validated
    prepared = load_catalog(name).catalog
    assert prepared == strict and schema.catalog_to_plain(prepared) == schema.catalog_to_plain(strict)
    assert prepared.card(strict.cards[0].name) == strict.cards[0]


def test_a_schema_change_makes_the_catalog_copy_a_miss(copies, monkeypatch):
    prepare.prepare()
    raw = (loader.DATA_DIR / "gpurenthub.yaml").read_bytes()
    assert bundled_yaml.read_copy(loader._copy_source(raw)) is not None
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: real(self) + b"\n# changed\n" if self.name == "schema.py"
                        else real(self))
    assert bundled_yaml.read_copy(loader._copy_source(raw)) is None


def test_catalog_check_validates_the_bundled_yaml_itself(copies, monkeypatch, capsys):
    prepare.prepare()
    real, validated = validation.validate_catalog, []

    def spy(data):
        validated.append(data["id"])
        return real(data)

    monkeypatch.setattr(validation, "validate_catalog", spy)
    assert load_catalog("gpurenthub", compiled=False).catalog == load_catalog("gpurenthub").catalog
    assert validated == ["gpurenthub"]  # `catalog check`'s load validated; the ask path's read the copy
    assert run_cli(capsys, ["catalog", "check", "gpurenthub"])[0] == 0
    assert validated == ["gpurenthub", "gpurenthub"]


def test_ask_imports_neither_pydantic_nor_yaml_nor_the_hub():
    code = ("import io, sys, contextlib, bot.cli.main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert bot.cli.main.main(['ask', '70B int4']) == 0\n"
            "    assert bot.cli.main.main(['ask', '--json', 'Llama 3.1 70B on 2x RTX 4090']) == 0\n"
            "heavy = ('pydantic', 'yaml', 'huggingface_hub', 'telegram', 'asyncio', 'bot.store', 'matplotlib',\n"
            "         'decimal', 'string', 'hmac', 'shutil')\n"
            "print(sorted(name for name in heavy if name in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                            env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})
    assert result.stdout.strip() == "[]", result.stderr


@pytest.mark.parametrize("name", BUNDLED)
def test_plain_catalogs_dump_copy_and_validate_back(name):
    catalog = load_catalog(name).catalog
    assert validation.validate_catalog(catalog.model_dump()) == catalog
    assert schema.catalog_from_plain(schema.catalog_to_plain(catalog)) == catalog
    cheaper = catalog.model_copy(update={"cards": catalog.cards[:1]})
    assert cheaper.cards == catalog.cards[:1] and cheaper.provider == catalog.provider
    assert cheaper.card(catalog.cards[-1].id) is None  # the index of the copy is its own
    card = catalog.cards[0]
    assert schema.Card.model_construct(**card.model_dump()) == card
    assert validation.validate_card(card.model_dump()) == card
