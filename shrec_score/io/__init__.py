"""Readers (text, binary) and atomic writers."""
