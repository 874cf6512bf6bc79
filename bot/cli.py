"""The `cardfit` command line: size, ask, chat, bot, catalog check, announce."""
from __future__ import annotations

import argparse
import json
import logging
import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from bot.render import plain, render_answer, render_parse_error
from catalog.loader import CatalogError, LoadedCatalog, load_catalog
from catalog.schema import Catalog
from engine.answer import Answer, build_answer
from engine.parse import Vocabulary, parse
from engine.sizing import WORKLOADS, SizeRequest

if TYPE_CHECKING:
    from bot.config import Settings

EXIT_OK = 0
EXIT_BAD_INPUT = 2


class CliError(Exception):
    """Bad arguments: exit 2 with a one-line message on stderr (and `error` set in --json output)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse would exit 2 with usage; keep it one line
        raise CliError(message)


def _positive_int(text: str) -> int:
    try:
        value = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    return value


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):  # 'nan', 'inf': no answer for them, and no NaN in the JSON (issue 15)
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="cardfit", description="How much VRAM do I need, and which GPU should I rent?")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    size = sub.add_parser("size", help="size a model from flags")
    size.add_argument("--catalog", default="gpurenthub", help="bundled catalog name or YAML path")
    what = size.add_mutually_exclusive_group(required=True)
    what.add_argument("--model", help="registry id, e.g. llama-3.1-70b")
    what.add_argument("--params", type=_number, help="parameters in billions, e.g. 70")
    size.add_argument("--precision")
    size.add_argument("--kv-precision")
    size.add_argument("--context", type=_positive_int)
    size.add_argument("--batch", type=_positive_int)
    size.add_argument("--workload", choices=WORKLOADS)
    size.add_argument("--card")
    size.add_argument("--count", type=_positive_int)
    size.add_argument("--region")
    size.add_argument("--billing", choices=("hour", "day", "week", "month"))
    size.add_argument("--coin")
    size.add_argument("--lang", choices=("en", "de"), default="en")
    size.add_argument("--details", action="store_true", help="show every component's arithmetic")
    size.add_argument("--json", action="store_true")

    ask = sub.add_parser("ask", help="answer a question in your own words (English or German)")
    ask.add_argument("--catalog", default="gpurenthub", help="bundled catalog name or YAML path")
    ask.add_argument("--lang", choices=("en", "de"), help="reply language (default: the question's)")
    ask.add_argument("--details", action="store_true")
    ask.add_argument("--json", action="store_true")
    ask.add_argument("text", nargs="+", help='the question (quotes optional), or "-" to read one question per line '
                                             "from stdin (with --json)")

    sub.add_parser("chat", help="the bot's conversation in the terminal (CARDFIT_* settings apply)")
    sub.add_parser("bot", help="run the Telegram bot (long polling); needs CARDFIT_BOT_TOKEN")
    announce = sub.add_parser("announce", help="show the channel post the current catalog would produce")
    announce.add_argument("--dry-run", action="store_true", required=True,
                          help="print only (posting happens in the bot: /reload or the catalog watch)")
    announce.add_argument("--catalog", help="catalog name or path (default: CARDFIT_CATALOG)")
    announce.add_argument("--lang", choices=("en", "de"), default="en")
    sub.add_parser("health", help="exit 0 when configuration, catalog and store are usable (Docker HEALTHCHECK)")

    catalog = sub.add_parser("catalog", help="catalog tools")
    catalog_sub = catalog.add_subparsers(dest="catalog_command", required=True, parser_class=_Parser)
    check = catalog_sub.add_parser("check", help="validate a catalog YAML file")
    check.add_argument("file")

    return parser


def _emit_error(message: str, as_json: bool) -> int:
    if as_json:
        print(json.dumps(_error_object(message), allow_nan=False))
    print(f"cardfit: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _error_object(message: str) -> dict[str, Any]:
    return {"request": None, "requirement": None, "fit": None, "reason": None, "alternatives": [],
            "topup_url": None, "error": message}


def _load(catalog: str) -> LoadedCatalog:
    try:
        return load_catalog(catalog)
    except CatalogError as exc:
        raise CliError(str(exc)) from None


def cmd_size(args: argparse.Namespace) -> int:
    catalog = _load(args.catalog).catalog
    if args.count is not None and not args.card:
        raise CliError("--count needs --card")
    regions = [region.id for region in catalog.regions]
    if args.region and args.region.upper() not in regions:
        raise CliError(f"unknown region {args.region!r} for {catalog.provider} "
                       f"({'use ' + ', '.join(regions) if regions else 'it publishes no regions'})")
    if args.coin and args.coin.upper() not in catalog.coins:
        raise CliError(f"{catalog.provider} does not take {args.coin!r} (use {', '.join(catalog.coins)})")
    request = SizeRequest(
        model=args.model, params_b=args.params, precision=args.precision, kv_precision=args.kv_precision,
        context_tokens=args.context, batch=args.batch, workload=args.workload, card=args.card,
        gpu_count=args.count if args.card else None, region=args.region.upper() if args.region else None,
    )
    answer = build_answer(request, catalog, billing=args.billing, coin=args.coin)
    return print_answer(answer, args.json, args.lang, details=args.details)


def print_answer(answer: Answer, as_json: bool, lang: str = "en", *, details: bool = False) -> int:
    if as_json:
        print(json.dumps(answer.to_json(), ensure_ascii=False, allow_nan=False))
    elif not answer.error:
        print(plain(render_answer(answer, lang, details=details, max_alternatives=3)))
    if answer.error:
        print(f"cardfit: {answer.error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return EXIT_OK


def cmd_catalog_check(args: argparse.Namespace) -> int:
    try:
        loaded = load_catalog(args.file)
    except CatalogError as exc:
        print(str(exc))
        return EXIT_BAD_INPUT
    print(f"ok: {loaded.catalog.provider}, {len(loaded.catalog.cards)} cards")
    return EXIT_OK


def ask_answer(text: str, catalog: Catalog, vocabulary: Vocabulary) -> tuple[Answer | None, str | None, str]:
    """(answer, parse error, language) for one question; pure, no preferences. `vocabulary`: the catalog's
    (Vocabulary.of_catalog), built once per run."""
    result = parse(text, vocabulary)
    if result.request is None:
        return None, result.error or "not a sizing question", result.language
    return build_answer(result.request, catalog), None, result.language


def _ask_json(text: str, catalog: Catalog, vocabulary: Vocabulary) -> dict[str, Any]:
    try:
        answer, error, _ = ask_answer(text, catalog, vocabulary)
    except Exception as exc:  # one bad line must not end a batch; say what happened on that line
        return _error_object(f"internal error: {exc.__class__.__name__}")
    if answer is None:
        error = error or "not a sizing question"
        return _error_object(f"{error}: {HELP_HINT}" if error == "not a sizing question" else error)
    return answer.to_json()


HELP_HINT = "ask e.g. '70B at 4-bit, 32k context', 'QLoRA Llama 3.1 70B' or 'Mixtral 8x7B on an RTX 4090'"


def cmd_ask(args: argparse.Namespace) -> int:
    catalog = _load(args.catalog).catalog
    vocabulary = Vocabulary.of_catalog(catalog)
    args.text = " ".join(args.text)
    if args.text == "-":
        if not args.json:
            raise CliError("reading questions from stdin needs --json")
        out = sys.stdout
        for line in sys.stdin:
            line_json = _ask_json(line.rstrip("\n"), catalog, vocabulary)
            out.write(json.dumps(line_json, ensure_ascii=False, allow_nan=False) + "\n")  # strict JSON (issue 15)
        out.flush()
        return EXIT_OK
    answer, error, language = ask_answer(args.text, catalog, vocabulary)
    if answer is None:
        if args.json:
            print(json.dumps(_ask_json(args.text, catalog, vocabulary), ensure_ascii=False, allow_nan=False))
        else:
            lang = args.lang or language
            print(plain(render_parse_error(lang, error or "not a sizing question")))
        print(f"cardfit: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return print_answer(answer, args.json, args.lang or language, details=args.details)


def _settings() -> Settings:
    from bot.config import ConfigError, load_settings

    try:
        return load_settings()
    except ConfigError as exc:
        raise CliError(str(exc)) from None


def cmd_chat(args: argparse.Namespace) -> int:
    import asyncio

    from bot.chat import run_chat

    settings = _settings()
    _load(settings.catalog)
    return asyncio.run(run_chat(settings))


class RedactSecrets:
    """A logging filter that replaces secrets (the bot token, the top-up key) in every record with '***'."""

    def __init__(self, secrets: list[str]):
        self.secrets = [secret for secret in secrets if len(secret) >= 8]

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if any(secret in message for secret in self.secrets):
            for secret in self.secrets:
                message = message.replace(secret, "***")
            record.msg, record.args = message, None
        return True


def cmd_bot(args: argparse.Namespace) -> int:
    settings = _settings()
    if settings.bot_token is None:
        raise CliError("CARDFIT_BOT_TOKEN is not set (get one from @BotFather); `cardfit chat` runs without it")
    _load(settings.catalog)
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # its request lines contain the bot token
    logging.getLogger("apscheduler").setLevel(logging.WARNING)  # a line per catalog-watch run otherwise
    redact = RedactSecrets([settings.bot_token.get_secret_value(),
                            settings.topup_secret.get_secret_value() if settings.topup_secret else "",
                            settings.webhook_secret.get_secret_value() if settings.webhook_secret else ""])
    for handler in logging.getLogger().handlers:
        handler.addFilter(redact)  # whatever a library logs at DEBUG, the secrets never reach the log
    from bot.app import build_application

    application = build_application(settings)
    if settings.webhook_url is not None:
        import asyncio

        from bot.webhook import serve_webhook

        asyncio.run(serve_webhook(application, settings))
        return EXIT_OK
    # Polling (the default) on a bot that had a webhook: PTB's run_polling deletes the webhook first.
    application.run_polling(allowed_updates=None, drop_pending_updates=False)
    return EXIT_OK


def cmd_health(args: argparse.Namespace) -> int:
    import asyncio

    from bot.store import Store
    from bot.store.database import redacted

    settings = _settings()
    _load(settings.catalog)

    async def probe() -> None:
        store = await Store.open(settings.db)
        try:
            await store.count_users()
        finally:
            await store.close()

    try:
        asyncio.run(probe())
    except Exception as exc:  # any failure to open the store is unhealthy; say which, never a secret
        raise CliError(f"store {redacted(settings.db)}: {exc.__class__.__name__}: {exc}") from None
    print("ok")
    return EXIT_OK


def cmd_announce(args: argparse.Namespace) -> int:
    import asyncio

    from bot.announcements import dry_run_text
    from bot.store import Store

    settings = _settings()
    loaded = _load(args.catalog or settings.catalog)

    async def last_text() -> str | None:
        store = await Store.open(settings.db)
        try:
            return await store.last_announced_text(loaded.catalog.id)
        finally:
            await store.close()

    print(plain(dry_run_text(loaded, asyncio.run(last_text()), args.lang)))
    return EXIT_OK


COMMANDS = {"size": cmd_size, "ask": cmd_ask, "chat": cmd_chat, "bot": cmd_bot, "health": cmd_health,
            "announce": cmd_announce}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in argv
    try:
        args = build_parser().parse_args(argv)
        if args.command == "catalog":
            return cmd_catalog_check(args)
        handler = COMMANDS.get(args.command) or getattr(args, "handler", None)
        if handler is None:
            raise CliError(f"unknown command {args.command!r}")
        return handler(args)
    except CliError as exc:
        return _emit_error(str(exc), as_json)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `cardfit ask ... | head`: the reader left; not an error worth a traceback
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
