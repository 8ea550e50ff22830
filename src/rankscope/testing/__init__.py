"""Test helpers that run real services on loopback (LLM providers, databases)."""
