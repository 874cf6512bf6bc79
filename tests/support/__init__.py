"""Test support: the Bot API emulator, the offline handler harness, the seeds' rounding helpers."""
