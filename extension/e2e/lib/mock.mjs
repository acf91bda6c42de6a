// The mock model (kestrel.testing.mock_model): start it, reconfigure it, read its counters; and a
// recording proxy in front of it that sees the Authorization header the server sends.
import * as fs from "node:fs";
import * as http from "node:http";
import * as path from "node:path";
import { COMPLETION, OUT, PYTHON } from "./config.mjs";
import { start } from "./processes.mjs";
import { log, waitFor } from "./util.mjs";

/** Starts the mock (TTFT 0, answering COMPLETION); resolves to its base URL (…/v1). */
export async function startMock(env) {
  const mock = start("mock-model", PYTHON, ["-m", "kestrel.testing.mock_model", "--port", "0", "--text", `${COMPLETION}\n`, "--ttft-ms", "0"], { env });
  const mockUrl = await waitFor(
    "the mock model",
    () => new Promise((resolve) => {
      const p = path.join(OUT, "mock-model.log");
      const m = /MOCK_READY (\S+)/.exec(fs.readFileSync(p, "utf8"));
      resolve(m ? m[1] : undefined);
    }),
    60_000,
  );
  log("mock model at", mockUrl, "pid", mock.pid);
  return mockUrl;
}

/** POST /_mock/config: what the mock answers next. */
export function setMock(mockUrl, cfg) {
  const mockRoot = mockUrl.replace(/\/v1\/?$/, "");
  return fetch(`${mockRoot}/_mock/config`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(cfg) });
}

/** How many chat-completion requests the mock has served. */
export async function chatCompletionRequests(mockUrl) {
  const mockRoot = mockUrl.replace(/\/v1\/?$/, "");
  return (await (await fetch(`${mockRoot}/_mock/stats`)).json()).requests["/v1/chat/completions"] ?? 0;
}

/** A pass-through proxy in front of the mock; `seen` lists the Authorization header of each request. */
export async function authRecordingProxy(targetUrl) {
  const { server, requests, url } = await recordingEndpoint(targetUrl);
  return { server, url, get seen() { return requests.map((r) => r.authorization); } };
}

/**
 * An HTTP endpoint that records every request it gets ({method, path, authorization}): in front
 * of `targetUrl` as a pass-through proxy, or, without one, answering 503 (an attacker's host).
 */
export function recordingEndpoint(targetUrl) {
  const target = targetUrl ? new URL(targetUrl) : undefined;
  const requests = [];
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method, path: req.url, authorization: req.headers.authorization || "" });
    if (!target) {
      req.resume();
      res.writeHead(503, { "content-type": "text/plain" });
      res.end("recorded\n");
      return;
    }
    const up = http.request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (upRes) => {
        res.writeHead(upRes.statusCode, upRes.headers);
        upRes.pipe(res);
      },
    );
    up.on("error", () => res.destroy());
    req.pipe(up);
    res.on("close", () => up.destroy());
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, requests, url: `http://127.0.0.1:${server.address().port}/v1` })),
  );
}
