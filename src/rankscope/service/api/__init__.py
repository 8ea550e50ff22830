"""The HTTP API: one router per resource under ``routes/``, shared dependencies in ``deps``."""
