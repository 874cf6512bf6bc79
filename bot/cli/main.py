"""The `cardfit` command line: size, ask, chat, bot, catalog check, announce."""
from __future__ import annotations

import argparse
import io
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, NoReturn

from bot.features.ask import ask_blocking
from catalog.loader import CatalogError, LoadedCatalog, load_catalog
from catalog.schema import Catalog
from engine.answer.build import Answer, build_answer
from engine.formats.quant import canonical_quant
from engine.models.registry import default_registry, find_hf_repo
from engine.parse import Vocabulary
from engine.serving.review import ENGINES, ServingOptions
from engine.serving.vllm import settings_for_version
from engine.sizing.rule import WORKLOADS, SizeRequest

if TYPE_CHECKING:
    import logging

    from bot.cli.ask_batch import AskBatch
    from bot.config import Settings
    from bot.features.hub_lookup import HubLookup, HubResult
    from engine.parse.repos import RepoReading

EXIT_OK = 0
EXIT_BAD_INPUT = 2


class CliError(Exception):
    """Bad arguments: exit 2 with a one-line message on stderr (and `error` set in --json output)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse would exit 2 with usage; keep it one line
        raise CliError(message)

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter for every add_argument, and each asks shutil for the terminal's width:
        # importing shutil (with bz2, lzma and zlib) was ~5 ms of every start. The same width, here.
        formatter_class: Any = self.formatter_class  # typeshed's protocol names prog only; HelpFormatter takes width
        return formatter_class(prog=self.prog, width=_terminal_columns() - 2)  # type: ignore[no-any-return]


def _terminal_columns() -> int:
    """shutil.get_terminal_size().columns: $COLUMNS, else the terminal's, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


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
    if not math.isfinite(value):  # 'nan', 'inf': no answer for them, and no NaN in the JSON (strict JSON)
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with `only` (the command being run), that command's part alone: each command's
    parser is a dozen argparse objects and gettext look-ups that a start of another command never reads (the
    cold start of `cardfit ask`). Its usage, help and errors are the same either way."""
    parser = _Parser(prog="cardfit", description="How much VRAM do I need, and which GPU should I rent?")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, add in _SUBCOMMANDS.items():
        if only not in _SUBCOMMANDS or name == only:
            add(sub)
    return parser


def _add_size(sub: argparse._SubParsersAction[_Parser]) -> None:
    size = sub.add_parser("size", help="size a model from flags")
    size.add_argument("--catalog", default="gpurenthub", help="bundled catalog name or YAML path")
    what = size.add_mutually_exclusive_group(required=True)
    what.add_argument("--model", help="registry id or Hugging Face repo, e.g. llama-3.1-70b, meta-llama/Llama-3.1-70B")
    what.add_argument("--params", type=_number, help="parameters in billions, e.g. 70")
    size.add_argument("--precision")
    size.add_argument("--quant", help="weight format with its real size: q4_k_m, q8_0, iq4_xs, awq, gptq, exl2:4.65, "
                                      "nf4, fp8, mxfp4, nvfp4 (docs/formats.md)")
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
    size.add_argument("--chart", metavar="FILE.png", help="also write the answer's chart as a PNG")
    _add_serving_flags(size)


def _add_ask(sub: argparse._SubParsersAction[_Parser]) -> None:
    ask = sub.add_parser("ask", help="answer a question in your own words (English or German)")
    ask.add_argument("--catalog", default="gpurenthub", help="bundled catalog name or YAML path")
    ask.add_argument("--lang", choices=("en", "de"), help="reply language (default: the question's)")
    ask.add_argument("--details", action="store_true")
    ask.add_argument("--json", action="store_true")
    _add_vllm_version(ask)
    ask.add_argument("text", nargs="+", help='the question (quotes optional), or "-" to read one question per line '
                                             "from stdin (with --json)")


def _add_chat(sub: argparse._SubParsersAction[_Parser]) -> None:
    sub.add_parser("chat", help="the bot's conversation in the terminal (CARDFIT_* settings apply)")


def _add_bot(sub: argparse._SubParsersAction[_Parser]) -> None:
    sub.add_parser("bot", help="run the Telegram bot (long polling); needs CARDFIT_BOT_TOKEN")


def _add_announce(sub: argparse._SubParsersAction[_Parser]) -> None:
    announce = sub.add_parser("announce", help="show the channel post the current catalog would produce")
    announce.add_argument("--dry-run", action="store_true", required=True,
                          help="print only (posting happens in the bot: /reload or the catalog watch)")
    announce.add_argument("--catalog", help="catalog name or path (default: CARDFIT_CATALOG)")
    announce.add_argument("--lang", choices=("en", "de"), default="en")


def _add_health(sub: argparse._SubParsersAction[_Parser]) -> None:
    sub.add_parser("health", help="exit 0 when configuration, catalog and store are usable (Docker HEALTHCHECK)")


def _add_models(sub: argparse._SubParsersAction[_Parser]) -> None:
    models = sub.add_parser("models", help="list the models the registry knows (id, params, context, formats)")
    models.add_argument("--search", metavar="TEXT", nargs="+",
                        help="only models whose names or repo ids contain every word")
    models.add_argument("--json", action="store_true")
    models.set_defaults(handler=cmd_models)
    models_sub = models.add_subparsers(dest="models_command", parser_class=_Parser)
    draft = models_sub.add_parser(
        "draft", help="a Hub repository's config.json and safetensors headers as a registry entry (YAML) to review")
    draft.add_argument("repo", help="the Hugging Face repository id, e.g. Qwen/Qwen3.5-27B")
    draft.add_argument("--from-dir", metavar="DIR",
                       help="read a local copy (config.json, model.safetensors.index.json, *.safetensors headers) "
                            "instead of the Hub")
    draft.set_defaults(handler=cmd_models_draft)


def _add_catalog(sub: argparse._SubParsersAction[_Parser]) -> None:
    catalog = sub.add_parser("catalog", help="catalog tools")
    catalog_sub = catalog.add_subparsers(dest="catalog_command", required=True, parser_class=_Parser)
    check = catalog_sub.add_parser("check", help="validate a catalog YAML file")
    check.add_argument("file")


def _add_demand(sub: argparse._SubParsersAction[_Parser]) -> None:
    demand = sub.add_parser("demand", help="what customers asked for (the operators' /demand) from CARDFIT_DB")
    demand.add_argument("--since", default="7d", type=_span_days, metavar="SPAN",
                        help="the last N days (30d) or weeks (4w), compared with the span before (default 7d)")
    form = demand.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true")
    form.add_argument("--csv", action="store_true")
    demand.add_argument("--lang", choices=("en", "de"), default="en")
    demand.set_defaults(handler=cmd_demand)


def _span_days(text: str) -> int:
    import re

    match = re.fullmatch(r"\s*(\d{1,4})\s*([dw])\s*", text.lower())
    if match is None or int(match.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a span such as 30d or 4w")
    return int(match.group(1)) * (7 if match.group(2) == "w" else 1)


_SUBCOMMANDS: dict[str, Callable[[argparse._SubParsersAction[_Parser]], None]] = {  # in `cardfit --help`'s order
    "size": _add_size, "ask": _add_ask, "chat": _add_chat, "bot": _add_bot, "announce": _add_announce,
    "health": _add_health, "models": _add_models, "catalog": _add_catalog, "demand": _add_demand,
}


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


def _add_serving_flags(size: argparse.ArgumentParser) -> None:
    """The serving check's options (DESIGN.md "Contract v2")."""
    size.add_argument("--engine", choices=ENGINES, help="serving check engine (default: llama.cpp for GGUF, else vllm)")
    size.add_argument("--tp", type=_positive_int, help="serving check on N GPUs of the fit's card (no --card/--count)")
    size.add_argument("--max-num-batched-tokens", type=_positive_int, help="vLLM's --max-num-batched-tokens")
    size.add_argument("--gpu-memory-utilization", type=_number, help="vLLM's share of GPU memory, e.g. 0.9")
    size.add_argument("--prompt-tokens", type=_positive_int,
                      help="prompt length for prefill and time to first token (default: the context)")
    size.add_argument("--target-tok-s", type=_number, help="decode speed each user needs, tokens/s")
    _add_vllm_version(size)


def _add_vllm_version(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--vllm-version", metavar="X.Y[.Z]",
                        help="follow an older vLLM release's memory accounting, e.g. 0.11 (default: the newest)")


def _vllm_version(args: argparse.Namespace) -> str | None:
    """--vllm-version checked: a release the serving check knows, else a CliError naming why."""
    version: str | None = getattr(args, "vllm_version", None)
    if version is not None:
        try:
            settings_for_version(version)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    return version


def _serving_options(args: argparse.Namespace) -> ServingOptions:
    if args.tp is not None and args.card:
        raise CliError("--tp applies to the fit's card; with --card use --count")
    try:
        return ServingOptions(engine=args.engine, tp=args.tp, max_num_batched_tokens=args.max_num_batched_tokens,
                              gpu_memory_utilization=args.gpu_memory_utilization, vllm_version=args.vllm_version)
    except ValueError as exc:
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
    quant = canonical_quant(args.quant) if args.quant else None
    if args.quant and quant is None:
        raise CliError(f"unknown weight format {args.quant!r} (e.g. q4_k_m, q8_0, iq4_xs, awq, gptq, exl2:4.65, nf4, "
                       "fp8, mxfp4, nvfp4)")
    request = SizeRequest(
        model=_model_id(args.model), params_b=args.params, precision=args.precision, kv_precision=args.kv_precision,
        context_tokens=args.context, batch=args.batch, workload=args.workload, card=args.card,
        gpu_count=args.count if args.card else None, region=args.region.upper() if args.region else None,
        quant=quant, target_tok_s=args.target_tok_s, prompt_tokens=args.prompt_tokens,
    )
    reading = _repo_reading(args.model)
    if reading is not None:
        _apply_repo(request, reading)
    registry = None
    if args.model and "/" in args.model and reading is None and _hub_lookup().enabled:
        from bot.features.hub_lookup import hub_note, hub_status

        hub = _hub_lookup().lookup_sync(args.model)
        note = hub_note(hub)
        if hub.hub is not None and note is not None:
            registry = default_registry().with_models(hub.hub.shape)
            request.assumed.append(note)
        elif note is not None:  # no size in a bare --model to fall back to: say why the model is unknown
            print(f"cardfit: {hub_status(hub)}", file=sys.stderr)
    answer = build_answer(request, catalog, registry=registry, billing=args.billing, coin=args.coin,
                          serving=_serving_options(args))
    if args.chart and not answer.error:
        write_chart(answer, args.lang, args.chart)
    return print_answer(answer, args.json, args.lang, details=args.details)


def write_chart(answer: Answer, lang: str, path: str) -> None:
    """--chart FILE.png: matplotlib is imported here only, so no other command pays for it."""
    from bot.features.chart import chart_data, render_png

    try:
        with open(path, "wb") as handle:
            handle.write(render_png(chart_data(answer, lang)))
    except OSError as exc:
        raise CliError(f"cannot write the chart to {path}: {exc.strerror or exc}") from None


def _repo_reading(model: str | None) -> RepoReading | None:
    """--model as a whole Hugging Face repo id, read as a question reads one (engine.parse.repos)."""
    if not model or "/" not in model:
        return None
    from engine.parse.repos import read_repo

    return read_repo(model, default_registry())


def _apply_repo(request: SizeRequest, reading: RepoReading) -> None:
    """The repo's model, and for a quantized checkpoint its repo and format (what --quant/--precision do not
    already say); a GGUF repo with no --quant is its usual Q4_K_M file, as in a question."""
    request.model = reading.model.id
    request.checkpoint = reading.checkpoint
    if request.quant is not None or request.precision is not None or reading.checkpoint is None:
        return
    if reading.gguf:
        from engine.parse.runtime import DEFAULT_PRECISION, DEFAULT_QUANT, runtime_note

        request.quant, request.precision = DEFAULT_QUANT, DEFAULT_PRECISION
        request.assumed.append(runtime_note("gguf"))
    else:
        request.quant, request.precision = reading.quant, reading.precision


def _model_id(model: str | None) -> str | None:
    """--model as a registry id or alias, else as a Hugging Face repo id (case-insensitive); else as given (the
    engine then says it does not know it)."""
    if not model:
        return model
    registry = default_registry()
    if registry.get(model) is not None:
        return model
    found = find_hf_repo(registry, model)
    return found.id if found is not None else model


def print_answer(answer: Answer, as_json: bool, lang: str = "en", *, details: bool = False) -> int:
    if as_json:
        print(json.dumps(answer.to_json(), ensure_ascii=False, allow_nan=False))
    elif not answer.error:
        from bot.texts.render import plain, render_answer  # the text only: --json never imports the renderer (#14)

        print(plain(render_answer(answer, lang, details=details, max_alternatives=3)))
    if answer.error:
        print(f"cardfit: {answer.error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return EXIT_OK


def cmd_models(args: argparse.Namespace) -> int:
    """`cardfit models [--search TEXT] [--json]`: the registry's models, one line each (or a JSON list)."""
    from engine.models.registry import default_registry

    registry = default_registry()
    text = " ".join(args.search or ())
    found = registry.search(text) if text else registry.models
    if args.json:
        print(json.dumps([model.listing() for model in found], ensure_ascii=False))
        return EXIT_OK
    if not found:
        print(f"no model matches {text!r}; `cardfit models` lists all {len(registry)}")
        return EXIT_OK
    for model in found:
        formats = [model.weights_format or "-"]
        if model.published_weights:
            formats[0] += f" {model.published_weights.gb:g} GB"
        for repo in model.quantized:
            if model.published_weights and repo.hf_id.lower() == (model.hf_id or "").lower():
                continue  # the release itself (gpt-oss's MXFP4): already its published weights above
            quant = repo.quant.upper().replace("GGUF_", "GGUF ")
            formats.append(f"{quant} {repo.gb:g} GB" if repo.gb else quant)
        context = f"{model.context_max:,}" if model.context_max else "-"
        print(f"{model.id:<30} {model.name:<34} {model.params_b:>8g}B {context:>10}  {', '.join(formats)}")
    print(f"{len(found)} of {len(registry)} models")
    return EXIT_OK


def cmd_models_draft(args: argparse.Namespace) -> int:
    """`cardfit models draft REPO [--from-dir DIR]`: the registry entry the repository's files say, for review."""
    from bot.cli.draft import DraftError, read_directory, read_hub
    from bot.features.hub_lookup import HubLookup
    from engine.models.draft import draft_entry

    try:
        if args.from_dir:
            config, weights, files = read_directory(Path(args.from_dir))
        else:
            config, weights, files = read_hub(args.repo, HubLookup.from_env().timeout_s)
        entry = draft_entry(args.repo, config, weights, files=files, registry=default_registry())
    except (DraftError, ValueError) as error:
        print(f"cardfit: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"# A draft for engine/models/data/*.yaml: check each REVIEW and UNVERIFIED line against the model card,\n"
          f"# then run .venv/bin/python -m bot.cli.prepare and the registry tests (docs/models.md).\n{entry}", end="")
    return EXIT_OK


def cmd_catalog_check(args: argparse.Namespace) -> int:
    try:
        loaded = load_catalog(args.file, compiled=False)  # `catalog check` validates the YAML itself
    except CatalogError as exc:
        print(str(exc))
        return EXIT_BAD_INPUT
    print(f"ok: {loaded.catalog.provider}, {len(loaded.catalog.cards)} cards")
    return EXIT_OK


def ask_answer(text: str, catalog: Catalog, vocabulary: Vocabulary,
               vllm_version: str | None = None) -> tuple[Answer | None, str | None, str]:
    """(answer, parse error, language) for one question, the bot's way of answering (bot/features/ask.py) with
    what the CLI has: no store, no settings, a Hub lookup that blocks. `vocabulary`: the catalog's
    (Vocabulary.of_catalog), built once per run; `vllm_version`: --vllm-version."""
    asked = ask_blocking(text, catalog, vocabulary, hub=_BLOCKING_HUB, vllm_version=vllm_version)
    return asked.answer, asked.error, asked.result.language


@lru_cache(maxsize=1)
def _hub_lookup() -> HubLookup:
    """One per run: a batch on stdin asks the Hub once per repository. bot.features.hub_lookup (and through it the
    store, asyncio and the database drivers) is imported here, when a question names a repository the registry
    does not know, not on every start of `cardfit ask` (the cold start: within 150 ms of `python -c pass`)."""
    from bot.features.hub_lookup import HubLookup

    return HubLookup.from_env()


class _BlockingHub:
    """The Hub lookup as bot.features.ask.ModelLookup, made on first use, each lookup on an event loop of its own."""

    @property
    def enabled(self) -> bool:
        return _hub_lookup().enabled

    async def lookup(self, repo_id: str) -> HubResult:
        return _hub_lookup().lookup_sync(repo_id)


_BLOCKING_HUB = _BlockingHub()


def ask_batch(catalog: Catalog, vocabulary: Vocabulary, vllm_version: str | None = None) -> AskBatch:
    """What `cardfit ask --json -` answers its lines with (bot/cli/ask_batch.py)."""
    from bot.cli.ask_batch import AskBatch

    return AskBatch(lambda text: _ask_json(text, catalog, vocabulary, vllm_version), _error_object)


def _ask_json(text: str, catalog: Catalog, vocabulary: Vocabulary,
              vllm_version: str | None = None) -> dict[str, Any]:
    """The JSON object `cardfit ask --json` prints for one question."""
    try:
        answer, error, _ = ask_answer(text, catalog, vocabulary, vllm_version)
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
    vllm_version = _vllm_version(args)
    if args.text == "-":
        if not args.json:
            raise CliError("reading questions from stdin needs --json")
        batch = ask_batch(catalog, vocabulary, vllm_version)
        stdin = sys.stdin
        if isinstance(stdin, io.TextIOWrapper) and stdin.errors == "strict":
            # An undecodable byte is that line's business, not the end of the run (a UTF-8 locale other than C
            # reads stdin strictly): it reaches the parser as a surrogate and goes back out as the same byte.
            stdin.reconfigure(errors="surrogateescape")
        batch.run(stdin, sys.stdout)
        return EXIT_OK
    answer, error, language = ask_answer(args.text, catalog, vocabulary, vllm_version)
    if answer is None:
        if args.json:
            print(json.dumps(_ask_json(args.text, catalog, vocabulary, vllm_version), ensure_ascii=False,
                             allow_nan=False))
        else:
            from bot.texts.render import plain, render_parse_error

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

    from bot.cli.chat import run_chat

    settings = _settings()
    _load(settings.catalog)
    return asyncio.run(run_chat(settings))


class RedactSecrets:
    """A logging filter that replaces secrets (the bot token, the top-up key, the webhook secret) in every record
    with '***', tracebacks included: a record's exc_info is formatted here, redacted, and kept as its exc_text.
    Every secret, however short (bot/config.py refuses short ones at start); the longest first, so one that holds
    another is replaced whole."""

    def __init__(self, secrets: list[str]):
        self.secrets = sorted((secret for secret in secrets if secret), key=len, reverse=True)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if any(secret in message for secret in self.secrets):
            record.msg, record.args = self.redact(message), None
        if record.exc_info and record.exc_info[0] is not None:
            # logging.Formatter prints exc_text as is when it is set: format the traceback once, redacted.
            import traceback  # here and below, not at the top: `cardfit ask` never needs it (cold start)

            record.exc_text = self.redact("".join(traceback.format_exception(*record.exc_info)).rstrip("\n"))
            record.exc_info = None
        elif record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        return True

    def excepthook(self, kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
        """sys.excepthook: an uncaught exception is printed to stderr with the secrets replaced."""
        import traceback

        sys.stderr.write(self.redact("".join(traceback.format_exception(kind, error, trace))))


BOT_TOKEN_REFUSED = "the bot token was refused by Telegram (revoked or mistyped? get a new one from @BotFather)"


def cmd_bot(args: argparse.Namespace) -> int:
    settings = _settings()
    if settings.bot_token is None:
        raise CliError("CARDFIT_BOT_TOKEN is not set (get one from @BotFather); `cardfit chat` runs without it")
    _load(settings.catalog)
    import logging

    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # its request lines contain the bot token
    logging.getLogger("apscheduler").setLevel(logging.WARNING)  # a line per catalog-watch run otherwise
    redact = RedactSecrets([settings.bot_token.get_secret_value(),
                            settings.topup_secret.get_secret_value() if settings.topup_secret else "",
                            settings.webhook_secret.get_secret_value() if settings.webhook_secret else ""])
    for handler in logging.getLogger().handlers:
        handler.addFilter(redact)  # whatever a library logs at DEBUG, the secrets never reach the log
        handler.addFilter(_request_errors_in_one_line)
    sys.excepthook = redact.excepthook  # nor an uncaught exception's traceback on stderr
    from telegram.error import InvalidToken, TelegramError

    from bot.telegram.app import build_application
    from bot.telegram.services import StartFailed

    application = build_application(settings)
    import asyncio

    try:
        if settings.webhook_url is not None:
            from bot.telegram.webhook import serve_webhook

            asyncio.run(serve_webhook(application, settings))
            return EXIT_OK
        # Polling (the default) through the durable inbox: stored before confirmed. On a bot that had a
        # webhook it deletes the webhook first, as PTB's run_polling did.
        from bot.telegram.inbox import serve_polling

        if settings.metrics_port is not None:  # webhook mode serves /metrics on its own server
            from bot.metrics import start_metrics_server

            start_metrics_server(settings.metrics_port)
        asyncio.run(serve_polling(application))
    except InvalidToken:
        # PTB's message quotes the whole token ("The token `...` was rejected by the server"): never print it.
        raise CliError(BOT_TOKEN_REFUSED) from None
    except StartFailed as exc:  # the store could not be opened: said in one line, as every failed start
        raise CliError(str(exc)) from None
    except TelegramError as exc:
        # getMe or setWebhook failed after the rate limiter's retries (Telegram unreachable, a proxy's HTML 500):
        # the redacting log filter never sees this line, so the secrets are taken out here.
        raise CliError(redact.redact(f"Telegram's Bot API failed: {exc.__class__.__name__}: {exc}"[:500])) from None
    return EXIT_OK


def _request_errors_in_one_line(record: logging.LogRecord) -> bool:
    """PTB logs a traceback with every Bot API answer that is not JSON (a proxy's HTML error page, at each retry):
    the line says what happened, the rate limiter's warning says it is retried."""
    if record.name.startswith("telegram.request"):
        record.exc_info = None
        record.exc_text = None
    return True


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

    from bot.operators.announcements import dry_run_text
    from bot.store import Store
    from bot.texts.render import plain

    settings = _settings()
    loaded = _load(args.catalog or settings.catalog)

    async def last_text() -> str | None:
        store = await Store.open(settings.db)
        try:
            last = await store.last_posted()  # of any catalog id, as the bot diffs (a renamed id is a change)
            return last.catalog_text if last is not None else None
        finally:
            await store.close()

    print(plain(dry_run_text(loaded, asyncio.run(last_text()), args.lang)))
    return EXIT_OK


def cmd_demand(args: argparse.Namespace) -> int:
    """The report of /demand over `--since` days, as text, JSON or CSV."""
    import asyncio
    import csv
    import datetime as dt

    from bot.features.demand import csv_rows, demand_report, render_report
    from bot.store import Store
    from bot.store.database import redacted
    from bot.texts.render import plain

    settings = _settings()

    async def report() -> Any:
        store = await Store.open(settings.db)
        try:
            return await demand_report(store, dt.datetime.now(dt.UTC).date(), args.since,
                                       catalog=_load(settings.catalog).catalog)  # the cards by name
        finally:
            await store.close()

    try:
        found = asyncio.run(report())
    except Exception as exc:  # noqa: BLE001 - any failure to read the store is said in one line, never a secret
        raise CliError(f"store {redacted(settings.db)}: {exc.__class__.__name__}: {exc}"[:500]) from None
    if args.json:
        print(json.dumps(found.to_json(), allow_nan=False))
    elif args.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerows(csv_rows(found))
    else:
        print(plain(render_report(found, args.lang)))
    return EXIT_OK


COMMANDS = {"size": cmd_size, "ask": cmd_ask, "chat": cmd_chat, "bot": cmd_bot, "health": cmd_health,
            "announce": cmd_announce}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in argv
    try:
        args = build_parser(argv[0] if argv else None).parse_args(argv)
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
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
