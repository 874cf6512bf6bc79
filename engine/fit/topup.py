"""The crypto top-up link: the provider's template filled with amount, coin and an HMAC reference."""
from __future__ import annotations

from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

from catalog.schema import Catalog

BILLING_HOURS = {"hour": 1, "day": 24, "week": 168, "month": None}  # month = the catalog's hours_per_month


def billing_hours(catalog: Catalog, period: str | None, *, minimum: bool = True, span: int = 1) -> int:
    """Hours in `span` billing periods ("for 2 weeks": 2 x 168), never below the provider's minimum term (unless
    minimum=False)."""
    period = period or catalog.default_billing
    if period not in BILLING_HOURS:
        raise ValueError(f"unknown billing period {period!r} (use hour, day, week or month)")
    hours = (BILLING_HOURS[period] or catalog.hours_per_month) * max(span, 1)
    return max(hours, catalog.minimum_term_hours, 1) if minimum else hours


def topup_amount_usd(catalog: Catalog, hourly_usd: float, monthly_usd: float, period: str | None,
                     span: int = 1) -> float:
    """What `span` periods cost: whole months at the monthly price, anything else by the hour."""
    hours = billing_hours(catalog, period, span=span)
    months, rest = divmod(hours, catalog.hours_per_month)
    if rest == 0:
        return monthly_usd * months
    return hourly_usd * hours


def resolve_coin(catalog: Catalog, coin: str | None) -> str:
    """The user's coin if the provider takes it, else the provider's default."""
    wanted = (coin or "").upper()
    return wanted if wanted in catalog.coins else catalog.default_coin


def user_ref(user_id: int | str, secret: str) -> str:
    """A short, stable, non-reversible reference for a user: no raw Telegram id ever goes into a URL."""
    import hashlib  # here: the CLI never makes a reference (hmac is ~1 ms of its cold start)
    import hmac

    digest = hmac.new(secret.encode(), str(user_id).encode(), hashlib.sha256).hexdigest()
    return digest[:16]


def topup_url(
    catalog: Catalog,
    amount_usd: float,
    coin: str | None = None,
    user_id: int | str | None = None,
    secret: str | None = None,
) -> str:
    coin = resolve_coin(catalog, coin)
    ref = user_ref(user_id, secret) if user_id is not None and secret else ""
    template = catalog.topup.url_template if ref else _without_ref(catalog.topup.url_template)
    # "%.2f" writes only digits, "." and "-" (or inf/nan), and the reference is hex: quote() leaves both as they
    # are, so only the coin (the catalog's own word) needs quoting.
    return template.format(amount=f"{amount_usd:.2f}", coin=_quoted(coin), ref=ref)


def _quoted(word: str) -> str:
    return quote(word, safe="")


def _without_ref(template: str) -> str:
    """Without a user there is no reference: drop the query parameter that carries {ref} rather than send 'ref='."""
    parts = urlsplit(template)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if v != "{ref}"]
    return urlunsplit(parts._replace(query="&".join(f"{k}={v}" for k, v in query)))


def period_prices(catalog: Catalog, hourly_usd: float, monthly_usd: float) -> dict[str, float]:
    """A card's or set's price for each billing period (a month is the catalog's monthly price, the others the
    hourly price times the period's hours; the minimum term applies to the top-up only)."""
    return {period: monthly_usd if hours is None else hourly_usd * hours for period, hours in BILLING_HOURS.items()}
