"""The conversation pass: billing periods and coins, and -- once every pass has run -- what kind of
answer the question asks for (a price, a comparison, the cheapest layout).

Billing and coin words are read before the model pass, so "for a week" is no count and "Monero" no model name;
the intent is decided last, from words no other pass needs ("cost", "vs", "cheapest") and what the passes found.
"""
from __future__ import annotations

import re

from engine.notes import Note
from engine.parse.draft import Draft
from engine.parse.scan import Scan
from engine.parse.words import (
    BILLING_ADJECTIVES,
    BILLING_ARTICLES,
    BILLING_LEADS,
    BILLING_UNITS,
    CHEAPEST_PHRASES,
    CHEAPEST_WORDS,
    CHOICE_WORDS,
    COIN_WORDS,
    COMPARE_WORDS,
    FORMAT_PAIRS,
    HOW_MUCH,
    MAX_BILLING_LEADS,
    MONEY_LEADS,
    PAY_WORDS,
    PRICE_WORDS,
    SPAN_LEADS,
    USD_WORDS,
    WORD_NUMBERS,
)
from engine.sizing.rule import MAX_BILLING_SPAN

# A budget in euros (read as USD, with a note: _find_money)
EUR_WORDS = frozenset({"eur", "euro", "euros"})

# Every word this pass starts from: a text with none of them has nothing for it (PAY_WORDS count only after a coin)
_STARTS = frozenset(BILLING_ADJECTIVES) | frozenset(BILLING_UNITS) | frozenset(COIN_WORDS)


def find_billing_and_coin(scan: Scan, draft: Draft) -> None:
    """'per hour', 'for a week', 'pro Tag', 'monthly' (the billing period); 'BTC', 'in Monero' (the coin).
    A second, different period or coin is listed in `ignored`."""
    if "$" in scan.text or not scan.words.isdisjoint(USD_WORDS):
        _find_money(scan, draft)
    if draft.budget_usd is None and ("€" in scan.text or not scan.words.isdisjoint(EUR_WORDS)):
        _find_money(scan, draft, "€", EUR_WORDS)
    if not scan.words.isdisjoint(EUR_WORDS):
        _euro_without_amount(scan, draft)
    if scan.words.isdisjoint(_STARTS):
        return
    low, used = scan.low, scan.used
    for i in range(scan.n):
        if used[i]:
            continue
        token = low[i]
        if token in BILLING_ADJECTIVES:
            _set_billing(draft, BILLING_ADJECTIVES[token], scan.raw(i))
            used[i] = True
        elif token in BILLING_UNITS:
            _read_period(scan, draft, i, BILLING_UNITS[token])
        elif token in COIN_WORDS and (token, scan.next_free(i + 1)) not in FORMAT_PAIRS:  # "bnb 4bit": a format
            coin = COIN_WORDS[token]
            if draft.coin is None:
                draft.coin = coin
            elif draft.coin != coin:
                draft.ignored.append(scan.raw(i))
            used[i] = True
    if draft.coin is not None:
        for i in range(scan.n):
            if low[i] in PAY_WORDS:
                used[i] = True


def _read_period(scan: Scan, draft: Draft, i: int, period: str) -> None:
    """A period word at i with its lead words: 'for 2 weeks' (a span of that period), 'for a week', 'per day'."""
    first = _billing_leads(scan, i)
    span = _span_before(scan, i)
    if span is not None and draft.billing_span is None:
        count, first = span
        if draft.billing in (None, period):
            draft.billing_span = count
            draft.billing = period
        else:  # a span of another period than the one already read ('$500/mo for 2 weeks'): named, never taken
            draft.ignored.append(scan.span(first, i))  # as that many of the other period
        scan.use(first, i - first + 1)
    elif first < i:
        _set_billing(draft, period, scan.span(first, i))
        scan.use(first, i - first + 1)


def _billing_leads(scan: Scan, i: int) -> int:
    """The first token of the lead words right before a period ('for a' week); i when there are none."""
    first = i
    while first - 1 >= 0 and i - first < MAX_BILLING_LEADS and scan.free(first - 1) \
            and scan.low[first - 1] in BILLING_LEADS \
            and (first == i or (scan.low[first] in BILLING_ARTICLES and scan.low[first - 1] not in BILLING_ARTICLES)):
        # two lead words are a preposition and an article ('for a' week, 'für eine' Woche), never two
        # prepositions: the 'Pro' of 'DeepSeek V4 Pro im Monat' is the model's, 'im' the period's
        first -= 1
    return first


def _span_before(scan: Scan, i: int) -> tuple[int, int] | None:
    """'for 2 weeks', 'für drei Tage', 'over 3 months': (the number of periods, the first token of the phrase);
    a number with no such lead ('8 hours of audio') is not a span."""
    k = i - 1
    if not scan.free(k) or not scan.free(k - 1) or scan.low[k - 1] not in SPAN_LEADS:
        return None
    token = scan.low[k]
    count = int(token) if token.isdigit() and len(token) <= 3 else WORD_NUMBERS.get(token)
    return (count, k - 1) if count is not None and 2 <= count <= MAX_BILLING_SPAN else None


_THOUSANDS = re.compile(r"[0-9]{1,3}(?:[.,][0-9]{3})+")  # "1,000", "1.000", "12.500.000"
_AMOUNT = re.compile(r"(?:[0-9]{1,3}(?:[.,][0-9]{3})+|[0-9]{1,7}(?:[.,][0-9]{1,2})?)k?")
_PER = re.compile(r"\s*/\s*$")  # "$1000/mo": the slash before a period


def _find_money(scan: Scan, draft: Draft, symbol: str = "$", words: frozenset[str] = USD_WORDS) -> None:
    """A budget in US dollars: '$1000', '1000 $', '500 USD', 'USD 800', '$1.5k', with the words that make it one
    ('under', 'Budget', 'bis'); a period right after it with a slash ('/mo', '/month') is its billing period.

    In euros ('unter 800 € im Monat', 'budget 500 EUR'; `symbol` '€'): the catalogs price in USD (catalog.schema
    Catalog.currency) and the top-up is paid in USD amounts, so the amount is read as that many dollars and a note
    says so. No exchange rate is applied: the engine reads no clock and fetches nothing, and a rate written into a
    data file would go stale and move the budget silently; the renter who wants the euro figure converts it
    with today's rate, knowing exactly what was compared."""
    low, text, tokens = scan.low, scan.text, scan.tokens
    for i in range(scan.n):
        if not scan.free(i) or not _AMOUNT.fullmatch(low[i]):
            continue
        before = text[tokens.end[i - 1] if i else 0:tokens.start[i]]
        after_end = tokens.start[i + 1] if i + 1 < scan.n else len(text)
        after = text[tokens.end[i]:after_end]
        first, last = i, i
        if before.rstrip().endswith(symbol) or after.lstrip().startswith(symbol):
            pass
        elif scan.next_free(i + 1) in words:
            last = i + 1
        elif scan.next_free(i - 1) in words:
            first = i - 1
        else:
            continue
        amount = _usd(low[i])
        if amount is None or draft.budget_usd is not None:
            continue
        draft.budget_usd = amount
        if symbol != "$":
            draft.assumed.append(Note(f"prices are in USD: {scan.span(i, i)} {symbol} read as a budget of "
                                      f"${amount:,.0f} (no exchange rate applied)", "budget_in_usd",
                                      written=f"{scan.span(i, i)} {symbol}", budget_usd=amount))
        while scan.free(first - 1) and low[first - 1] in MONEY_LEADS and i - first < 3:
            first -= 1
        scan.use(first, last - first + 1)
        nxt = last + 1
        unit = scan.next_free(nxt)
        gap = text[tokens.end[last]:tokens.start[nxt]] if nxt < scan.n else ""
        if unit is not None and _PER.match(gap) and (unit in BILLING_UNITS or unit == "mo"):
            _set_billing(draft, BILLING_UNITS.get(unit, "month"), scan.span(nxt, nxt))
            scan.use(nxt, 1)
        return


def _euro_without_amount(scan: Scan, draft: Draft) -> None:
    """'Preise in Euro', 'zahlen in euro': euros asked for with no amount. The catalogs price in USD and the
    top-up is paid in USD amounts (as for a euro budget, no rate is applied), so a note says the prices stay in
    US dollars; the word is read, not listed as not understood."""
    for i in range(scan.n):
        if scan.free(i) and scan.low[i] in EUR_WORDS:
            scan.use(i, 1)
            draft.assumed.append(Note(f"prices are in USD: the catalog prices its cards in US dollars, not in "
                                      f"{scan.raw(i)}", "prices_in_usd", written=scan.raw(i)))
            return


def _usd(token: str) -> float | None:
    """'1000' -> 1000, '1,000' and '1.000' -> 1000 (thousands), '1.5k' -> 1500, '99.50' -> 99.5."""
    kilo = token.endswith("k")
    token = token.rstrip("k")
    if _THOUSANDS.fullmatch(token) and not kilo:
        token = token.replace(",", "").replace(".", "")
    value = float(token.replace(",", "."))
    value *= 1000 if kilo else 1
    return value if 0 < value <= 10_000_000 else None


def _set_billing(draft: Draft, period: str, written: str) -> None:
    if draft.billing is None:
        draft.billing = period
    elif draft.billing != period:
        draft.ignored.append(written)


def decide_intent(scan: Scan, draft: Draft) -> None:
    """After every pass: a comparison (two cards and 'vs'/'oder'), a price question (a card, no model or size,
    and a price word, 'how much' or a billing period), and whether the cheapest layout was asked for."""
    low, words = scan.low, scan.words
    if not words.isdisjoint(CHEAPEST_WORDS) or (not words.isdisjoint(_CHEAPEST_HEADS)
                                                and _has_pair(low, CHEAPEST_PHRASES)):
        draft.cheapest = True
    if draft.second_card is not None and (not words.isdisjoint(COMPARE_WORDS)
                                          or sum(1 for token in low if token in CHOICE_WORDS) == 1):
        draft.set_compare()
        return
    if draft.card is None or draft.model is not None or draft.params_b is not None or draft.ambiguous \
            or draft.budget_gb is not None:
        return  # no price question, whatever its words
    asks_price = not words.isdisjoint(PRICE_WORDS) or "wieviel" in words or draft.billing is not None \
        or (not words.isdisjoint(_HOW_MUCH_HEADS) and _has_pair(low, HOW_MUCH))
    if asks_price:
        draft.intent = "price"


# The first words of the phrases: a text without one of them has none of the phrases
_CHEAPEST_HEADS = frozenset(phrase[0] for phrase in CHEAPEST_PHRASES)
_HOW_MUCH_HEADS = frozenset(phrase[0] for phrase in HOW_MUCH if len(phrase) == 2)


def _has_pair(low: list[str], phrases: frozenset[tuple[str, ...]]) -> bool:
    return any((low[i], low[i + 1]) in phrases for i in range(len(low) - 1))
