"""Edits the model proposes: quick fixes for diagnostics (and, later, inline edits)."""
