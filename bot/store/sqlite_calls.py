"""What runs on SQLite's connection for SqliteDatabase (bot/store/database.py): on aiosqlite's thread, or at once
on the event loop for a short call; each function takes the sqlite3 connection first."""
from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from bot.store.dialect import _WITH_WRITE

BUSY_TIMEOUT_MS = 5000  # how long a call on the thread waits for another process's write lock
Parameters = tuple[Any, ...]


def is_busy(error: sqlite3.OperationalError) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    return code is not None and code & 0xFF == sqlite3.SQLITE_BUSY  # SQLITE_BUSY and its extended codes


def statement(conn: sqlite3.Connection, sql: str, parameters: Parameters) -> tuple[list[Any], int, int | None]:
    """One statement inside a transaction: (its rows, the rows it changed, lastrowid), its cursor closed."""
    cursor = conn.execute(sql, parameters)
    try:
        rows = cursor.fetchall() if cursor.description else []
        rowcount = cursor.rowcount
        if rowcount == -1 and _WITH_WRITE.match(sql):
            # Python's sqlite3 counts only statements that start with INSERT/UPDATE/DELETE; ask SQLite.
            rowcount = int(conn.execute("SELECT changes()").fetchone()[0])
        return rows, rowcount, cursor.lastrowid
    finally:
        cursor.close()


def begin(conn: sqlite3.Connection, patient: bool) -> None:
    if patient:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("BEGIN IMMEDIATE")


def end(conn: sqlite3.Connection, statement: str, patient: bool, quiet: bool = False) -> None:
    """COMMIT or ROLLBACK, and back to no busy timeout (on the loop's terms)."""
    try:
        conn.execute(statement)
    except sqlite3.Error:
        if not quiet:
            raise
    finally:
        if patient and not (statement == "COMMIT" and conn.in_transaction):  # a failed COMMIT is rolled back next
            conn.execute("PRAGMA busy_timeout = 0")


def execute_closed(conn: sqlite3.Connection, sql: str, parameters: Parameters) -> None:
    conn.execute(sql, parameters).close()


def execute_rows(conn: sqlite3.Connection, sql: str, parameters: Parameters) -> list[Any]:
    return conn.execute(sql, parameters).fetchall()


def run_batch(conn: sqlite3.Connection, functions: list[Callable[[sqlite3.Connection], Any]], patient: bool
               ) -> list[tuple[bool, Any]]:
    """On aiosqlite's thread: each call in turn, with its result or its exception; with `patient`, each waits
    for another process's write lock up to BUSY_TIMEOUT_MS (the connection waits for none between calls)."""
    outcomes: list[tuple[bool, Any]] = []
    if patient:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    try:
        for function in functions:
            try:
                outcomes.append((True, function(conn)))
            except Exception as exc:  # noqa: BLE001 - handed to that call's caller, as aiosqlite would
                outcomes.append((False, exc))
    finally:
        if patient:
            conn.execute("PRAGMA busy_timeout = 0")
    return outcomes


def run_in_transaction(conn: sqlite3.Connection, statements: Sequence[tuple[str, Parameters]]) -> None:
    """The statements in one transaction; rolled back whole when one fails."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for sql, parameters in statements:
            conn.execute(sql, parameters).close()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
