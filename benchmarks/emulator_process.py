"""The Bot API emulator in a process of its own, for bench_bot: the bot's process then holds the bot alone.

In bench_bot's first comparison the emulator runs on the bot's event loop, so the bot's process CPU also holds
the emulator's work for each of its calls, and a bot whose replies are longer (Cardfit's answer is about 1 KB of
HTML with a ten-button keyboard, the echo bot's a few words) pays there for what api.telegram.org does on
Telegram's machines: parse the HTML into entities, store the message, write it back as JSON. Here that work runs
in a child process (`python -m benchmarks.emulator_process`), on the machine's other core, and is reported
beside the bot's figure, not in it.

Protocol, one JSON object per line: the child prints {"base_url", "base_file_url"} once it listens; then for each
{"texts": [...], "first_user": N, "interval_s": S} it reads on stdin it pushes text i from user N + i (all at
once, or one every S seconds), waits until every user has had a sendMessage, and prints {"elapsed", "latencies",
"replies", "cpu_s"}: seconds from the first push to the last reply, each reply's latency in ms, the users
answered, and the child's own process CPU over the round. End of stdin ends it.
"""
from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from tests.support.botapi_emulator import BotApiEmulator

TOKEN = "123456:BENCH-token-not-real"


def round_limit_s(count: int, interval_s: float) -> float:
    """How long a round may take before the bot is taken as stuck: the pushing, plus 50 ms a reply (a bot 20x
    slower than Cardfit), plus 30 s."""
    return 30 + count * (0.05 + interval_s)


async def push_and_wait(emulator: BotApiEmulator, texts: list[str], first_user: int,
                        interval_s: float = 0.0) -> dict[str, Any]:
    """Push text i from user first_user + i (all at once, or one every `interval_s`), wait for every reply."""
    pushed: dict[int, float] = {}
    mark = emulator.mark()
    cpu = time.process_time()
    start = time.monotonic()
    for index, text in enumerate(texts):
        user = first_user + index
        if interval_s and index:
            await asyncio.sleep(max(0.0, start + index * interval_s - time.monotonic()))
        emulator.push_message(user, text)
        pushed[user] = time.monotonic()
    calls = await emulator.wait_for("sendMessage", lambda c: c.chat_id in pushed, count=len(texts), since=mark,
                                    timeout=round_limit_s(len(texts), interval_s))
    return {"elapsed": max(c.time for c in calls) - start,
            "latencies": [(c.time - pushed[c.chat_id]) * 1000 for c in calls],
            "replies": len({c.chat_id for c in calls}), "cpu_s": time.process_time() - cpu}


async def serve() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    async with BotApiEmulator(token=TOKEN) as emulator:
        print(json.dumps({"base_url": emulator.base_url, "base_file_url": emulator.base_file_url}), flush=True)
        while line := await reader.readline():
            command = json.loads(line)
            print(json.dumps(await push_and_wait(emulator, command["texts"], command["first_user"],
                                                 command.get("interval_s", 0.0))), flush=True)


class EmulatorProcess:
    """The parent's side: start the child, hand it rounds, stop it (an async context manager)."""

    def __init__(self) -> None:
        self._child: asyncio.subprocess.Process | None = None
        self.base_url = ""
        self.base_file_url = ""

    async def __aenter__(self) -> EmulatorProcess:
        self._child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "benchmarks.emulator_process", stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, limit=2**26)
        try:
            hello = await asyncio.wait_for(self._line(), 30)
        except BaseException as exc:
            await self.__aexit__(type(exc), exc, None)  # not left running, holding the emulator's port
            raise
        self.base_url, self.base_file_url = hello["base_url"], hello["base_file_url"]
        return self

    async def _line(self) -> dict[str, Any]:
        assert self._child is not None and self._child.stdout is not None
        line = await self._child.stdout.readline()
        if not line:
            raise RuntimeError("the emulator process ended (see its stderr above)")
        result: dict[str, Any] = json.loads(line)
        return result

    async def round(self, texts: list[str], first_user: int, interval_s: float = 0.0) -> dict[str, Any]:
        assert self._child is not None and self._child.stdin is not None
        command = {"texts": texts, "first_user": first_user, "interval_s": interval_s}
        self._child.stdin.write(json.dumps(command).encode() + b"\n")
        await self._child.stdin.drain()
        # The child gives up at round_limit_s and ends; a child that hangs alive is not waited for beyond it.
        return await asyncio.wait_for(self._line(), round_limit_s(len(texts), interval_s) + 30)

    async def __aexit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        if kind is not None and child.returncode is None:
            child.kill()  # failed mid-round: it is not reading stdin, closing it would not end it
        if child.stdin is not None:
            child.stdin.close()
        try:
            await asyncio.wait_for(child.wait(), 10)
        except TimeoutError:
            child.kill()
            await child.wait()


if __name__ == "__main__":
    asyncio.run(serve())
