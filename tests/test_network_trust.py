"""TLS with a custom CA and an HTTPS proxy, for both HTTP and the WebSocket; verification stays on."""

from __future__ import annotations

import asyncio
import subprocess

import pytest

from conftest import clean_env, complete, kestrel, open_doc, wait_for
from kestrel.testing.mock_model import MockModelServer

URI = "file:///work/net.py"


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem")],
        check=True, capture_output=True,
    )
    return d / "cert.pem", d / "key.pem"


@pytest.fixture
def tls_mock(cert):
    with MockModelServer(certfile=str(cert[0]), keyfile=str(cert[1])) as server:
        server.configure(text="print('secure')\n")
        yield server


class ConnectProxy:
    """A minimal HTTPS (CONNECT) proxy that counts the tunnels it opens."""

    def __init__(self) -> None:
        self.tunnels: list[str] = []
        self.server: asyncio.AbstractServer | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await reader.readuntil(b"\r\n\r\n")
        method, target, _ = request.split(b"\r\n", 1)[0].decode().split(" ", 2)
        if method != "CONNECT":
            writer.write(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
            writer.close()
            return
        host, port = target.rsplit(":", 1)
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        self.tunnels.append(target)
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def stop(self) -> None:
        if self.server:
            self.server.close()


@pytest.mark.parametrize("provider", ["chat", "responses-ws"])
async def test_custom_ca_and_https_proxy_for_http_and_websocket(tls_mock, cert, provider):
    proxy = ConnectProxy()
    proxy_url = await proxy.start()
    env = clean_env(HTTPS_PROXY=proxy_url, https_proxy=proxy_url, NO_PROXY="", no_proxy="")
    options = {"kestrel": {"provider": provider, "baseUrl": tls_mock.base_url, "model": "mock-model",
                           "apiKey": "test-key-123456", "caBundle": str(cert[0])}}
    try:
        async with kestrel(options, env=env) as client:
            open_doc(client, URI, "x = \n")
            assert await complete(client, URI, 0, 4) == "print('secure')"
            assert proxy.tunnels and all(t.endswith(str(tls_mock.port)) for t in proxy.tunnels)
            if provider == "responses-ws":
                assert tls_mock.stats()["ws_connections"] >= 1
    finally:
        await proxy.stop()


async def test_unknown_certificate_is_refused_with_a_clear_message(tls_mock):
    options = {"kestrel": {"provider": "chat", "baseUrl": tls_mock.base_url, "model": "mock-model", "maxRetries": 0}}
    async with kestrel(options, env=clean_env(SSL_CERT_FILE="")) as client:
        open_doc(client, URI, "x = \n")
        assert await complete(client, URI, 0, 4) is None
        await wait_for(lambda: any("certificate" in m.message for m in client.messages), what="the TLS message")
        assert "/v1/chat/completions" not in tls_mock.stats()["requests"]


def test_ca_bundle_adds_to_the_system_cas_rather_than_replacing_them(cert):
    """`caBundle` is documented as adding a corporate CA: public endpoints must keep verifying."""
    import ssl

    from kestrel.config import Settings
    from kestrel.providers.openai_http import tls_context

    system = ssl.create_default_context().cert_store_stats()["x509_ca"]
    with_bundle = tls_context(Settings(ca_bundle=str(cert[0]))).cert_store_stats()["x509_ca"]
    assert with_bundle == system + 1
