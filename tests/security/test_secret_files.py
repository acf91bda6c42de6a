"""Secret files never reach a model (SECURITY.md, "Never sent"), on every feature path.

The table pins each built-in rule with files it must exclude and files it must not, written the
ways an editor names them: any case, percent-encoded, Windows paths and URIs. The attack then
opens secret-named documents holding a canary in a real kestrel-lsp process and drives every
feature that reads a document at them (and completes in a normal file while they are open as
neighbouring tabs): the mock model's request log must never contain the canary.
"""

from __future__ import annotations

import json

import pytest
from lsprotocol import types

from conftest import code_actions, change_doc, complete, kestrel, mock_options, open_doc, wait_for
from kestrel.context import exclusion
from kestrel.context.exclusion import is_excluded, is_excluded_path

# rule -> (names it must exclude, names it must not)
TABLE: dict[str, tuple[list[str], list[str]]] = {
    ".env*": ([".env", ".ENV", ".env.local", ".Env.Production", ".envrc"], ["env.py", "environment.ts", "my.envy"]),
    "*.env": (["prod.env", "Staging.ENV"], ["env", "prod.env.py"]),
    "*.pem": (["server.pem", "Server.PEM", "ca-bundle.Pem"], ["pem.py", "server.pem.md"]),
    "*.key": (["tls.key", "PRIVATE.KEY"], ["key.py", "keyboard.ts", "monkey"]),
    "*.p12": (["cert.p12", "CERT.P12"], ["p12.txt"]),
    "*.pfx": (["cert.pfx", "Cert.PFX"], ["pfx.go"]),
    "*.ppk": (["putty.ppk", "PUTTY.PPK"], ["ppk.rs"]),
    "*.keystore": (["release.keystore", "Debug.KeyStore"], ["keystore.py"]),
    "*.jks": (["trust.jks", "TRUST.JKS"], ["jks.java"]),
    "id_rsa*": (["id_rsa", "ID_RSA", "id_rsa.pub", "id_rsa_work"], ["rsa.py", "grid_rsa.c"]),
    "id_dsa*": (["id_dsa", "ID_DSA"], ["dsa.py"]),
    "id_ecdsa*": (["id_ecdsa", "Id_Ecdsa_sk"], ["ecdsa.py"]),
    "id_ed25519*": (["id_ed25519", "ID_ED25519.pub"], ["ed25519.py"]),
    ".netrc": ([".netrc", ".NETRC"], ["netrc.py", ".netrc.md"]),
    "_netrc": (["_netrc", "_NETRC"], ["_netrc.md"]),
    ".npmrc": ([".npmrc", ".NpmRc"], ["npmrc.js"]),
    ".pypirc": ([".pypirc", ".PYPIRC"], ["pypirc.py"]),
    ".pgpass": ([".pgpass", ".PGPASS"], ["pgpass.py"]),
    ".htpasswd": ([".htpasswd", ".HTPASSWD"], ["htpasswd.go"]),
    "*credentials*": (["credentials", "credentials.json", "credentials.yaml", "Credentials.YML", "aws_credentials",
                       ".git-credentials", "gcp-credentials.json", "DB_Credentials.ini"],
                      ["creds.py", "credential.py", "auth.py", "credentials.py", "CredentialsProvider.java",
                       "load-credentials.ts", "credentials.md"]),
    "secret.*": (["secret.json", "Secret.YAML"], ["secret", "secretary.py", "my_secret.py"]),
    "secrets.*": (["secrets.yaml", "SECRETS.JSON", "secrets.py"], ["secretsmanager.ts"]),
    "*.secret": (["db.secret", "API.SECRET"], ["db.secret.md"]),
    "*.secrets": (["prod.secrets", "PROD.SECRETS"], ["secrets_test.go"]),
}

# folder -> (paths under it that are excluded, paths that are not)
DIR_TABLE: dict[str, tuple[list[str], list[str]]] = {
    ".git": ([".git/config", ".GIT/hooks/pre-commit", "sub/.git/HEAD"], [".gitignore", ".github/workflows/ci.yml",
                                                                          "git/config", ".gitattributes"]),
    ".ssh": ([".ssh/config", ".SSH/known_hosts", "home/.ssh/authorized_keys"], ["ssh/config.py", "sshd.py"]),
    ".aws": ([".aws/config", ".AWS/sso/cache/token.json"], ["aws/client.py", "aws.py"]),
    ".gnupg": ([".gnupg/pubring.kbx", ".GnuPG/gpg.conf"], ["gnupg.py", "gnupg/wrapper.py"]),
}


def forms(relative: str) -> list[str]:
    """One workspace file as editors and users name it: a file URI, a percent-encoded one (VS Code
    encodes the drive colon; any character may be encoded), a Windows URI, a Windows path."""
    encoded = "".join(f"%{ord(c):02X}" if c == "." else c for c in relative)
    win = relative.replace("/", "\\")
    return [f"file:///home/dev/proj/{relative}", f"file:///home/dev/proj/{encoded}",
            f"file:///c%3A/Users/dev/proj/{relative}", f"C:\\Users\\dev\\proj\\{win}",
            f"vscode-remote://ssh-remote%2Bbox/home/dev/proj/{relative}"]


def test_the_table_covers_every_rule():
    assert set(TABLE) == set(exclusion.SECRET_NAMES) | set(exclusion.SECRET_DATA_NAMES)
    assert set(DIR_TABLE) == set(exclusion.SECRET_DIRS)


@pytest.mark.parametrize("rule", sorted(TABLE))
def test_secret_names_are_excluded_in_any_case_and_form(rule):
    excluded, kept = TABLE[rule]
    for name in excluded:
        for uri in forms(f"src/{name}"):
            assert is_excluded(uri), f"{uri} should be excluded by {rule}"
    for name in kept:
        for uri in forms(f"src/{name}"):
            assert not is_excluded(uri), f"{uri} should not be excluded ({rule})"


@pytest.mark.parametrize("folder", sorted(DIR_TABLE))
def test_everything_under_a_secret_folder_is_excluded(folder):
    excluded, kept = DIR_TABLE[folder]
    for path in excluded:
        for uri in forms(path):
            assert is_excluded(uri), f"{uri} should be excluded (under {folder}/)"
    for path in kept:
        for uri in forms(path):
            assert not is_excluded(uri), f"{uri} should not be excluded ({folder}/)"


@pytest.mark.parametrize("uri", [
    "file:///w/tls.key. .",  # Windows opens `tls.key` for a name with trailing dots and spaces
    "file:///w/Server.PEM%20",
    "file:///w/server.pem::$DATA",  # an NTFS stream of the key file
    "file:///w/.npmrc::$DATA",
])
def test_names_windows_opens_as_a_secret_are_excluded(uri):
    assert is_excluded(uri)


def test_user_globs_match_case_insensitively():
    assert is_excluded("file:///w/Private/notes.md", ("**/private/**",))
    assert is_excluded("file:///w/Data.CSV", ("*.csv",))
    assert not is_excluded("file:///w/public/notes.md", ("**/private/**",))


# -- the attack, over LSP ---------------------------------------------------------------------

CANARY = "KESTREL-CANARY-7f3a"
# Names the audit saw reach the model, plus the forms the rules promise (encoded, Windows, folders).
SECRET_URIS = [
    "file:///work/proj/credentials.yaml",
    "file:///work/proj/certs/Server.PEM",
    "file:///work/proj/.ENV",
    "file:///work/proj/ID_RSA",
    "file:///work/proj/aws_credentials",
    "file:///work/proj/%2Eenv.local",
    "file:///c%3A/Users/dev/proj/config/Secrets.YAML",
    "file:///work/proj/.git/config",
    "file:///work/proj/.aws/config",
]
NORMAL = "file:///work/proj/app.py"
# Secret documents look like the code being completed, so that neighbour snippets would pick them.
SECRET_TEXT = ("def connect_database(host, port, user):\n"
               f"    password = '{CANARY}-{{n}}'\n"
               "    return open_connection(host, port, user, password)\n")
NORMAL_TEXT = "import db\n\n\ndef connect_database(host, port, user):\n    return open_connection(host, port, user, "


def leaked(mock) -> bool:
    stats = mock.stats()
    assert sum(stats["requests"].values()) <= 50, "the mock's request log keeps 50 entries: split the test"
    return CANARY in json.dumps(stats["request_log"])


def chat_requests(mock) -> int:
    return mock.stats()["requests"].get("/v1/chat/completions", 0)


async def open_secrets(client) -> None:
    for n, uri in enumerate(SECRET_URIS):
        open_doc(client, uri, SECRET_TEXT.format(n=n), language="python")
    open_doc(client, NORMAL, NORMAL_TEXT)


async def test_neighbouring_secret_tabs_and_completion_in_them_send_nothing(mock):
    mock.configure(text="user)\n")
    async with kestrel(mock_options(mock)) as client:
        await open_secrets(client)
        # A normal neighbour as alike as the secret ones: its snippet shows the neighbour path ran.
        open_doc(client, "file:///work/proj/db.py", SECRET_TEXT.format(n=0).replace(CANARY, "NORMAL-NEIGHBOUR"))
        for uri in SECRET_URIS:
            assert await complete(client, uri, 2, 10) is None
        assert chat_requests(mock) == 0  # no completion was even asked for inside a secret file
        await complete(client, NORMAL, 4, len(NORMAL_TEXT.split("\n")[4]))
        assert chat_requests(mock) == 1
        assert "NORMAL-NEIGHBOUR" in json.dumps(mock.stats()["request_log"])
        assert not leaked(mock)


async def test_inline_edit_and_next_edit_refuse_secret_files(mock):
    mock.configure(text="def connect_database(host, port, user):\n    return None\n")
    async with kestrel(mock_options(mock, nextEdit=True)) as client:
        await open_secrets(client)
        for n, uri in enumerate(SECRET_URIS):
            result = await client.protocol.send_request_async("kestrel/edit", {
                "id": f"e{n}", "uri": uri, "instruction": "rename user to username",
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}}})
            assert "excluded" in (getattr(result, "error", None) or "")
            change_doc(client, uri, SECRET_TEXT.format(n=n).replace("user", "username"), 2)
            nes = await client.protocol.send_request_async("kestrel/nextEdit", {"uri": uri, "position": {"line": 0, "character": 30}})
            assert nes is None
        assert chat_requests(mock) == 0 and not leaked(mock)


async def test_quick_fix_and_explain_refuse_secret_files_even_when_asked_directly(mock):
    """Listing offers nothing for a secret file; a client that sends the action's data anyway
    (resolve, the `kestrel.fix` and `kestrel.explain` commands) gets a refusal, not a model call."""
    mock.configure(text="    return open_connection(host, port, user, password)\n")
    async with kestrel(mock_options(mock)) as client:
        await open_secrets(client)
        for uri in SECRET_URIS:
            diag = types.Diagnostic(range=types.Range(start=types.Position(line=2, character=11),
                                                      end=types.Position(line=2, character=26)),
                                    message="undefined name 'open_connection'", source="pyflakes")
            listed = await code_actions(client, uri, diag)
            assert not listed
            data = {"uri": uri, "version": 1, "message": diag.message, "startLine": 2, "endLine": 2,
                    "code": None, "source": "pyflakes"}
            resolved = await client.code_action_resolve_async(types.CodeAction(
                title="Fix with Kestrel", kind=types.CodeActionKind.QuickFix, data={**data, "action": "fix"}))
            assert resolved.edit is None
            for command in ("kestrel.fix", "kestrel.explain"):
                answer = await client.workspace_execute_command_async(
                    types.ExecuteCommandParams(command=command, arguments=[{**data, "action": "fix"}]))
                assert not answer
        await wait_for(lambda: any("excluded" in m.message for m in client.messages), what="the refusal")
        assert chat_requests(mock) == 0 and not leaked(mock)


async def test_chat_refuses_text_of_a_secret_file_attached_as_context(mock):
    """The editor attaches chat context as text: the server checks it against the open secret
    documents (a whole file, a selection, a part of a line) and the labels the extension writes."""
    mock.configure(text="It connects to the database.")
    async with kestrel(mock_options(mock)) as client:
        await open_secrets(client)
        attachments = {
            "file": f"File .ENV:\n```python\n{SECRET_TEXT.format(n=2)}\n```",
            "selection": f"Selected lines 2-2 of certs/Server.PEM:\n```python\n    password = '{CANARY}-1'\n```",
            "part of a line": f"```\n= '{CANARY}-4'\n```",
            "unopened, by label": f"Open file deploy/credentials.yaml:\n```\ntoken: {CANARY}-x\n```",
        }
        for n, (kind, text) in enumerate(attachments.items()):
            result = await client.protocol.send_request_async("kestrel/chat", {
                "id": f"c{n}", "messages": [{"role": "user", "content": f"Explain this code.\n\n{text}"}]})
            assert "never sends" in (getattr(result, "error", None) or ""), kind
        ack = await client.protocol.send_request_async("kestrel/steer", {"id": "c0", "text": f"and this:\n    password = '{CANARY}-3'"})
        assert not ack.accepted and "never sends" in ack.error
        assert chat_requests(mock) == 0 and not leaked(mock)
        # A chat about the normal file still works.
        fine = await client.protocol.send_request_async("kestrel/chat", {
            "id": "ok", "messages": [{"role": "user", "content": f"Explain:\n```python\n{NORMAL_TEXT}\n```"}]})
        assert fine.text == "It connects to the database." and not getattr(fine, "error", None)
        assert chat_requests(mock) == 1 and not leaked(mock)


async def test_a_workspace_file_that_links_to_a_secret_is_a_secret(mock, tmp_path):
    """A hostile workspace names a link innocently (`settings_notes.py -> ~/.aws/credentials`,
    `keys/deploy.py -> ~/.ssh/id_ed25519`): judged where it really is, it is never a neighbour
    snippet, never completed in, and a chat carrying its text or its label is refused, open or not."""
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text(SECRET_TEXT.format(n=0))
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text(SECRET_TEXT.format(n=1))
    ws = tmp_path / "ws"
    (ws / "keys").mkdir(parents=True)
    (ws / "settings_notes.py").symlink_to(home / ".aws" / "credentials")
    (ws / "keys" / "deploy.py").symlink_to(home / ".ssh" / "id_ed25519")
    app = ws / "app.py"
    app.write_text(NORMAL_TEXT)
    mock.configure(text="user)\n")
    async with kestrel(mock_options(mock), workspace=ws) as client:
        linked = ws / "settings_notes.py"
        open_doc(client, linked.as_uri(), linked.read_text(), language="python")
        open_doc(client, "file:///elsewhere/db.py", SECRET_TEXT.format(n=0).replace(CANARY, "NORMAL-NEIGHBOUR"))
        open_doc(client, app.as_uri(), NORMAL_TEXT)
        await complete(client, app.as_uri(), 4, len(NORMAL_TEXT.split("\n")[4]))
        assert "NORMAL-NEIGHBOUR" in json.dumps(mock.stats()["request_log"])  # the neighbour path ran
        assert await complete(client, linked.as_uri(), 2, 10) is None
        attachments = [f"Open file settings_notes.py:\n```python\n{linked.read_text()}\n```",
                       f"File keys/deploy.py, lines 1-3 (connect_database):\n```python\n    password = '{CANARY}-1'\n```"]
        for n, text in enumerate(attachments):
            result = await client.protocol.send_request_async("kestrel/chat", {
                "id": f"l{n}", "messages": [{"role": "user", "content": f"Explain this code.\n\n{text}"}]})
            assert "never sends" in (getattr(result, "error", None) or ""), text
        assert chat_requests(mock) == 1 and not leaked(mock)


def test_every_label_the_extension_writes_is_checked():
    """The labels of extension/src/chat/context.ts and mentionContext.ts, each naming a secret."""
    from kestrel.context.excluded_text import excluded_source

    labels = ["File deploy/prod.pem:", "Open file deploy/prod.pem:", "Selected lines 3-4 of deploy/prod.pem:",
              "Selected lines 4 of deploy/prod.pem:", "File deploy/prod.pem, lines 1-30:",
              "File deploy/prod.pem, lines 3-9 (load_key):", "File deploy/prod.pem (its first 20000 characters):"]
    for label in labels:
        message = {"role": "user", "content": f"{label}\n```\nKEY\n```\nwhat is this?"}
        assert excluded_source([message], [], [], is_excluded_path) == "deploy/prod.pem", label
    fine = {"role": "user", "content": "File src/app.py, lines 1-3:\n```\nx = 1\n```"}
    assert excluded_source([fine], [], [], is_excluded_path) is None


async def test_percent_encoded_uris_are_read_and_still_excluded(mock):
    """VS Code percent-encodes URIs (`c%3A`, `%20`); pygls files documents under the decoded URI.
    Documents must be found under either spelling (else Windows gets no completions at all) and a
    secret spelled `%2Eenv` must still be excluded, as a neighbour too."""
    mock.configure(text="user)\n")
    current = "file:///c%3A/Users/dev/my%20proj/app.py"
    async with kestrel(mock_options(mock)) as client:
        open_doc(client, "file:///c%3A/Users/dev/my%20proj/%2Eenv", SECRET_TEXT.format(n=0))
        open_doc(client, "file:///c%3A/Users/dev/my%20proj/db%20utils.py",
                 SECRET_TEXT.format(n=0).replace(CANARY, "NORMAL-NEIGHBOUR"))
        open_doc(client, current, NORMAL_TEXT)
        await complete(client, current, 4, len(NORMAL_TEXT.split("\n")[4]))
        assert chat_requests(mock) == 1
        assert "NORMAL-NEIGHBOUR" in json.dumps(mock.stats()["request_log"])
        assert not leaked(mock)


def test_the_shared_table_with_the_extension():
    """`secret_paths.json` is also run by the extension's own rules (extension/test/secretFiles.test.ts)."""
    from pathlib import Path


    cases = json.loads((Path(__file__).parent / "secret_paths.json").read_text())["cases"]
    assert [c["path"] for c in cases if is_excluded_path(c["path"]) != c["excluded"]] == []


@pytest.mark.parametrize("uri", ["file:///w/.env", "file:///w/.env.local", "file:///w/certs/server.pem",
                                 "file:///w/k.key", "file:///home/u/.ssh/id_rsa", "file:///w/.git/config"])
def test_secret_files_are_excluded(uri):
    assert is_excluded(uri)


def test_user_globs_and_normal_files():
    assert not is_excluded("file:///w/src/app.py")
    assert is_excluded("file:///w/secret/app.py", ("**/secret/*",))


@pytest.mark.parametrize("glob", ["private/**", "private/*", "private/keys.py", "./private/keys.py", "**/private/**"])
def test_user_globs_written_relative_to_the_workspace_folder(glob):
    assert is_excluded_path("/home/u/ws/private/keys.py", (glob,))
    assert not is_excluded_path("/home/u/ws/privateer/keys.py", (glob,))
    assert not is_excluded_path("/home/u/ws/src/app.py", (glob,))
