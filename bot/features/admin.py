"""The admins' /reload: read the catalog file now (the operators' catalog watch, bot/operators/announce.py)."""
from __future__ import annotations

from bot.features.core import Core
from bot.features.feature import Command, CommandInput, Feature, Scope
from bot.features.reply import Reply
from bot.features.welcome import unknown_command


async def reload(core: Core, given: CommandInput) -> Reply | None:
    """None when the admins were just sent the rejection of a newly broken file, this one included."""
    if core.reloader is None:  # the terminal chat has no catalog watch to trigger
        return await unknown_command(given.caller, "reload")
    outcome = await core.reloader.check(force=True)
    return None if outcome.notified else Reply(outcome.text)


FEATURE = Feature("admin", commands=(Command("reload", Scope.ADMIN, reload, "command.reload"),))
