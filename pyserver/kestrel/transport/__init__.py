"""How LSP messages reach the server, in place of pygls's `start_io` / `start_tcp`:

- `framing.py`: `Content-Length` framing with limits (a huge or lying header never costs memory);
- `inbox.py`: hands each JSON-RPC message to pygls and answers everything else with an error;
- `stdio.py`: the editor's pipe (VS Code, Neovim, Helix);
- `tcp.py` + `token_file.py`: one authenticated client over a socket.
"""
