# Cardfit: the Telegram bot on a slim Python base, as a non-root user, with its SQLite store in a volume.
FROM python:3.11-slim

# MPLCONFIGDIR: the chart's matplotlib keeps its font cache in the writable volume (the non-root user cannot write
# /app), so it is built once, not on every start.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    CARDFIT_DB=/app/var/cardfit.sqlite3 \
    MPLCONFIGDIR=/app/var/matplotlib

WORKDIR /app
RUN groupadd --system --gid 10001 cardfit \
    && useradd --system --uid 10001 --gid cardfit --home-dir /app --no-create-home cardfit

COPY pyproject.toml README.md ./
COPY bot ./bot
COPY engine ./engine
COPY catalog ./catalog
# bot.cli.prepare: the prepared copies of the bundled data are written here, as root, next to the installed package
# (nothing writes them at run time; without them every start reads the YAML: `cardfit ask` within 150 ms of
# `python -c pass`).
RUN pip install --no-cache-dir . \
    && python -m bot.cli.prepare \
    && mkdir -p /app/var \
    && chown 10001:10001 /app/var

USER 10001:10001
VOLUME ["/app/var"]

# Healthy when the configuration, the catalog and the store open (no network call, no token in output).
HEALTHCHECK --interval=60s --timeout=10s --start-period=20s --retries=3 CMD ["cardfit", "health"]

CMD ["cardfit", "bot"]
