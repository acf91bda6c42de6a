"""Inline completion: decide what to ask the model and what to show."""
