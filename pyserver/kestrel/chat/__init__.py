"""Chat turns streamed to the client (the chat panel and `kestrel/chat` for any LSP client)."""
