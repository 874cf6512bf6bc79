"""The compiled copies of the bundled data (issue #14: cold start) say exactly what the YAML says, are rebuilt
when missing or outdated, never load what is not data, and keep pydantic, PyYAML and the Hub off `cardfit ask`."""
from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic_core import PydanticUndefined

from catalog import bundled_yaml, schema, validation
from catalog.bundled_yaml import bundled_files, load_bundled, load_bundled_file
from catalog.loader import BUNDLED, load_catalog
from engine.models.registry import build_registry, default_registry, load_entries
from engine.parse.vocabulary import ModelNames, _model_names
from tests.test_cli import run_cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fresh_dir(tmp_path, monkeypatch):
    """An empty compiled-copy directory: every load below builds its copy from the YAML first."""
    monkeypatch.setattr(bundled_yaml, "COMPILED_DIR", tmp_path / "compiled")
    return tmp_path / "compiled"


def test_a_compiled_copy_is_the_yaml(fresh_dir):
    for path in bundled_files():
        from_yaml = load_bundled(path.read_text(encoding="utf-8"))
        first = load_bundled_file(path)  # builds the copy
        assert list(fresh_dir.glob(f"{bundled_yaml._slot(path)}.*.pickle")), path
        second = load_bundled_file(path)  # reads it
        assert first == second == from_yaml, path
        assert pickle.dumps(second) == pickle.dumps(from_yaml), path  # the same types too (1 is not 1.0)


def test_this_checkouts_copies_are_the_yaml():
    """What this checkout's catalog/_compiled/ holds (make install built it) is what the YAML gives now."""
    for path in bundled_files():
        assert load_bundled_file(path) == load_bundled(path.read_text(encoding="utf-8")), path


def test_a_changed_file_gets_a_new_copy_and_the_old_one_goes(fresh_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(bundled_yaml, "_ROOT", tmp_path)
    path = tmp_path / "data.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    assert load_bundled_file(path) == {"a": 1}
    path.write_text("a: 2\n", encoding="utf-8")
    assert load_bundled_file(path) == {"a": 2}
    assert len(list(fresh_dir.glob("data-yaml.*.pickle"))) == 1


def test_a_broken_or_foreign_copy_is_ignored(fresh_dir):
    path = bundled_files()[0]
    load_bundled_file(path)
    (copy,) = fresh_dir.glob(f"{bundled_yaml._slot(path)}.*.pickle")
    copy.write_bytes(b"not a pickle")
    assert load_bundled_file(path) == load_bundled(path.read_text(encoding="utf-8"))

    class Boom:
        def __reduce__(self):
            return (print, ("unpickled code ran",))

    copy.write_bytes(pickle.dumps(Boom()))
    assert bundled_yaml.read_compiled(copy) is bundled_yaml._MISSING  # builtins.print is no data
    assert load_bundled_file(path) == load_bundled(path.read_text(encoding="utf-8"))


def test_an_unwritable_directory_costs_speed_only(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(bundled_yaml, "COMPILED_DIR", blocker / "compiled")  # under a file: mkdir fails
    path = bundled_files()[0]
    assert load_bundled_file(path) == load_bundled(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", BUNDLED)
def test_a_compiled_catalog_is_the_strictly_validated_one(fresh_dir, name):
    strict = load_catalog(name, compiled=False).catalog
    first = load_catalog(name).catalog  # validated from the YAML, then kept
    assert list(fresh_dir.glob(f"catalog-{name}.*.pickle"))
    compiled = load_catalog(name).catalog  # from the copy
    assert compiled == first == strict
    assert pickle.dumps(compiled) == pickle.dumps(strict)
    assert compiled.card(strict.cards[0].name) == strict.cards[0]


def test_catalog_check_validates_the_bundled_yaml_itself(fresh_dir, monkeypatch, capsys):
    load_catalog("gpurenthub")  # a compiled copy exists now
    real, validated = validation.validate_catalog, []

    def spy(data):
        validated.append(data["id"])
        return real(data)

    monkeypatch.setattr(validation, "validate_catalog", spy)
    assert load_catalog("gpurenthub", compiled=False).catalog == load_catalog("gpurenthub").catalog
    assert validated == ["gpurenthub"]  # `catalog check`'s load validated; the ask path's read the copy
    assert run_cli(capsys, ["catalog", "check", "gpurenthub"])[0] == 0
    assert validated == ["gpurenthub", "gpurenthub"]


def test_the_compiled_registry_and_name_index_are_what_the_yaml_builds():
    registry = default_registry()
    rebuilt = build_registry(load_entries())
    assert registry.models == rebuilt.models and registry.by_key == rebuilt.by_key
    assert registry.quantized_by_key == rebuilt.quantized_by_key
    names = _model_names(registry)
    fresh = ModelNames(rebuilt)
    assert names.registry is registry  # the index refers to the registry's own models, not copies
    assert all(names.exact[key] is registry.get(model.id) for key, model in names.exact.items())
    assert {key: value for key, value in vars(names).items() if key != "registry"} == {
        key: value for key, value in vars(fresh).items() if key != "registry"}


def test_plain_catalog_objects_have_the_validation_schemas_fields():
    """catalog.schema (plain) and catalog.validation (pydantic) describe one catalog: same fields, same order,
    same defaults, the same ones required."""
    for model, plain in validation._PLAIN.items():
        declared = [(name, None if field.default is PydanticUndefined else field.default, field.is_required())
                    for name, field in model.model_fields.items()]
        fields = [(field.name, None if field.default is dataclasses.MISSING else field.default,
                   field.default is dataclasses.MISSING) for field in dataclasses.fields(plain)]
        assert declared == fields, plain.__name__
    assert set(validation._PLAIN.values()) == {cls for cls in vars(schema).values()
                                               if dataclasses.is_dataclass(cls) and cls.__module__ == schema.__name__}


def test_ask_imports_neither_pydantic_nor_yaml_nor_the_hub():
    code = ("import io, sys, contextlib, bot.cli.main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert bot.cli.main.main(['ask', '70B int4']) == 0\n"
            "    assert bot.cli.main.main(['ask', '--json', 'Llama 3.1 70B on 2x RTX 4090']) == 0\n"
            "heavy = ('pydantic', 'yaml', 'huggingface_hub', 'telegram', 'asyncio', 'bot.store', 'matplotlib',\n"
            "         'decimal', 'string', 'hmac', 'shutil')\n"
            "print(sorted(name for name in heavy if name in sys.modules))\n")
    for _start in ("the first start may build the compiled copies", "the second reads them"):
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                                env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})
    assert result.stdout.strip() == "[]", result.stderr


@pytest.mark.parametrize("name", BUNDLED)
def test_plain_catalogs_dump_copy_and_validate_back(name):
    catalog = load_catalog(name).catalog
    assert validation.validate_catalog(catalog.model_dump()) == catalog
    cheaper = catalog.model_copy(update={"cards": catalog.cards[:1]})
    assert cheaper.cards == catalog.cards[:1] and cheaper.provider == catalog.provider
    assert cheaper.card(catalog.cards[-1].id) is None  # the index of the copy is its own
    card = catalog.cards[0]
    assert schema.Card.model_construct(**card.model_dump()) == card
