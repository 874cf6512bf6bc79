"""Which failed Bot API requests provably had no effect (safe to send again) and which may have arrived.

Its own module because both the transport (bot/telegram/ptb.py) and the alert fan-out (bot/operators/alerts.py) decide
by it.
"""
from __future__ import annotations

import httpx

__all__ = ["NOT_PROCESSED_ANSWERS", "NOT_SENT_CAUSES", "never_reached_telegram"]

# A request that failed in one of these ways never reached Telegram, so sending it again cannot double it: the
# connection was never made (refused, connect time-out, no free connection in the pool). Everything else after
# the request was written (read time-out, connection dropped before the answer, a broken read) may have taken
# effect: Telegram has no idempotency key. PTB wraps them all as TimedOut/NetworkError and keeps the transport's
# error as __cause__ (telegram/request/_httpxrequest.py, do_request).
NOT_SENT_CAUSES: tuple[type[BaseException], ...] = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (httpx.HTTPError, TimeoutError)
# HTTP answers that mean "not processed": nginx in front of the Bot API answers 502 when no backend took the
# request, 503 when it refused it. A 500 or 504 may come after the backend acted, so they are final.
NOT_PROCESSED_ANSWERS = ("Bad Gateway", "Service Unavailable")


def never_reached_telegram(error: BaseException) -> bool:
    """The request provably had no effect: safe to send again."""
    cause = error.__cause__
    if isinstance(cause, NOT_SENT_CAUSES):
        return True
    return not isinstance(cause, TRANSPORT_ERRORS) and str(error).startswith(NOT_PROCESSED_ANSWERS)
