"""The agent's parts: tool calls read from any model's answer (tool_calls.py)."""
