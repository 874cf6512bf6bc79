"""The `cardfit` command line: size, ask, chat, bot, catalog check, announce."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from bot.render import plain, render_answer
from catalog.loader import CatalogError, LoadedCatalog, load_catalog
from engine.answer import Answer, build_answer
from engine.sizing import WORKLOADS, SizeRequest

EXIT_OK = 0
EXIT_BAD_INPUT = 2


class CliError(Exception):
    """Bad arguments: exit 2 with a one-line message on stderr (and `error` set in --json output)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would exit 2 with usage; keep it one line
        raise CliError(message)


def _positive_int(text: str) -> int:
    try:
        value = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    return value


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


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

    catalog = sub.add_parser("catalog", help="catalog tools")
    catalog_sub = catalog.add_subparsers(dest="catalog_command", required=True, parser_class=_Parser)
    check = catalog_sub.add_parser("check", help="validate a catalog YAML file")
    check.add_argument("file")

    return parser


def _emit_error(message: str, as_json: bool) -> int:
    if as_json:
        print(json.dumps(_error_object(message)))
    print(f"cardfit: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _error_object(message: str) -> dict:
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
    request = SizeRequest(
        model=args.model, params_b=args.params, precision=args.precision, kv_precision=args.kv_precision,
        context_tokens=args.context, batch=args.batch, workload=args.workload, card=args.card,
        gpu_count=args.count if args.card else None, region=args.region.upper() if args.region else None,
    )
    answer = build_answer(request, catalog, billing=args.billing, coin=args.coin)
    return print_answer(answer, args.json, args.lang, details=args.details, billing=args.billing)


def print_answer(answer: Answer, as_json: bool, lang: str = "en", *, details: bool = False,
                 billing: str | None = None, model_note: str | None = None) -> int:
    if as_json:
        print(json.dumps(answer.to_json(), ensure_ascii=False))
    elif not answer.error:
        print(plain(render_answer(answer, lang, details=details, billing=billing, model_note=model_note,
                                  max_alternatives=3)))
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


COMMANDS = {"size": cmd_size}


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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
