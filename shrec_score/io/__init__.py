"""Readers (text, binary)."""
