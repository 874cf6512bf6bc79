"""Shared pytest fixtures: a started Telegram Bot API emulator on 127.0.0.1."""

import pytest_asyncio

from tests.support.botapi_emulator import BotApiEmulator

# A syntactically valid token (id:secret) that can never work against the real API.
EMULATOR_TOKEN = "123456:TEST-TOKEN-not-real"


@pytest_asyncio.fixture
async def emulator():
    """A fresh, started BotApiEmulator per test; stopped (long polls released) at teardown."""
    async with BotApiEmulator(token=EMULATOR_TOKEN) as emu:
        yield emu
