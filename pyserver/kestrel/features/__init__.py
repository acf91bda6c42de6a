"""One module per editor feature: each turns an LSP request into engine calls and the engine's
answer back into LSP types. Features receive the `Core`; none reaches into another."""
