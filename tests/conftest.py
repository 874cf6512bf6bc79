"""Shared pytest fixtures: a started Telegram Bot API emulator on 127.0.0.1; the parser's vocabulary of the
bundled catalogs."""

import atexit
import os
import shutil
import tempfile

import pytest
import pytest_asyncio

from catalog.loader import BUNDLED, load_catalog
from catalog.schema import Card
from engine.models.registry import default_registry
from engine.parse import Vocabulary
from tests.support.botapi_emulator import BotApiEmulator
from tests.support.botharness import BUNDLED_CATALOG, Harness

# No test reaches the Hugging Face Hub: huggingface_hub reads these at import, so they are set before
# anything imports it; tests of the lookup point it at tests/support/hubserver.py. Port 9 (discard) refuses.
os.environ["HF_ENDPOINT"] = "http://127.0.0.1:9"
os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="cardfit-hf-home-")
atexit.register(shutil.rmtree, os.environ["HF_HOME"], ignore_errors=True)  # one per run and worker: not left behind
os.environ.pop("HF_HUB_OFFLINE", None)

# A syntactically valid token (id:secret) that can never work against the real API.
EMULATOR_TOKEN = "123456:TEST-TOKEN-not-real"


@pytest_asyncio.fixture
async def emulator():
    """A fresh, started BotApiEmulator per test; stopped (long polls released) at teardown."""
    async with BotApiEmulator(token=EMULATOR_TOKEN) as emu:
        yield emu


@pytest.fixture
def catalog_file(tmp_path):
    """A copy of the bundled GPU Rent Hub catalog that a test may edit (the bot reloads it)."""
    path = tmp_path / "catalog.yaml"
    shutil.copy(BUNDLED_CATALOG, path)
    return path


@pytest_asyncio.fixture
async def bot(settings):
    """The real Application on the test's `settings` fixture (each bot test module says which settings), through
    the Harness's fake Bot API transport."""
    async with Harness(settings) as harness:
        yield harness


def bundled_cards() -> tuple[Card, ...]:
    """The cards of every bundled catalog (GPU Rent Hub first)."""
    return tuple(card for name in BUNDLED for card in load_catalog(name).catalog.cards)


def bundled_region_names() -> dict[str, str]:
    """Region names of every bundled catalog -> region id ({'Dallas': 'DFW-1', ...}); the first catalog wins."""
    names: dict[str, str] = {}
    for name in BUNDLED:
        for region in load_catalog(name).catalog.regions:
            names.setdefault(region.name, region.id)
    return names


@pytest.fixture(scope="session")
def bundled_vocabulary() -> Vocabulary:
    """Every bundled catalog's cards and region names with the bundled registry: the parser tests' phrasings name
    cards of both providers."""
    return Vocabulary.build(default_registry(), bundled_cards(), bundled_region_names())


@pytest.fixture(scope="session")
def postgres_server():
    """One PostgreSQL server for the whole session (tests/support/postgres.py), stopped and removed at the end;
    each test that needs one takes a fresh database from it (`postgres_server.create_database()`)."""
    import shutil

    from tests.support.postgres import start_or_skip

    server = start_or_skip()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.root, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def db_target(request, tmp_path):
    """Where a store lives, once per engine: a SQLite file in tmp_path, or a fresh PostgreSQL database's URL."""
    if request.param == "sqlite":
        return str(tmp_path / "cardfit.sqlite3")
    return request.getfixturevalue("postgres_server").create_database()


@pytest_asyncio.fixture(params=["sqlite", "postgresql"])
async def store(request):
    """An open Store once per engine: SQLite in memory, or a fresh PostgreSQL database (a test module may define
    its own `store`, which then takes precedence)."""
    from bot.store import Store

    target = ":memory:" if request.param == "sqlite" else request.getfixturevalue("postgres_server").create_database()
    opened = await Store.open(target)
    yield opened
    await opened.close()


@pytest.fixture(autouse=True)
def _catalog_settles_at_once(monkeypatch):
    """A reload takes a changed file without the production settle delay (1 s), so the suite stays fast; the
    tests of the delay set `catalog_settle_s` themselves. A real `cardfit bot` process in the e2e tests gets
    its own environment."""
    monkeypatch.setenv("CARDFIT_CATALOG_SETTLE_S", "0")
