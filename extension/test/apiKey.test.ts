/**
 * API keys are stored per provider and endpoint and handed over only for the one selected
 * (issue #20, finding 5), through the real ApiKey and "Switch provider" code against a fake
 * VS Code: user settings, a workspace's `.vscode/settings.json`, SecretStorage and the prompts.
 */
import { beforeEach, describe, expect, it, vi } from "vitest";

type Listener = (e: { affectsConfiguration: (section: string) => boolean }) => void;

const vs = vi.hoisted(() => ({
  user: {} as Record<string, unknown>,
  workspace: {} as Record<string, unknown>,
  configListeners: [] as Listener[],
  inputs: [] as (string | undefined)[],
  prompts: [] as string[],
  infos: [] as string[],
  infoChoice: undefined as string | undefined,
  pick: undefined as string | undefined,
}));

vi.mock("vscode", () => {
  class EventEmitter<T> {
    private listeners: ((e: T) => void)[] = [];
    event = (l: (e: T) => void) => {
      this.listeners.push(l);
      return { dispose: () => undefined };
    };
    fire(e?: T): void {
      for (const l of this.listeners) l(e as T);
    }
    dispose(): void {}
  }
  const configuration = () => ({
    get: (k: string) => vs.workspace[k] ?? vs.user[k],
    inspect: (k: string) => ({ globalValue: vs.user[k], workspaceValue: vs.workspace[k] }),
    has: () => true,
    update: async (k: string, v: unknown, target: number) => {
      (target === 1 ? vs.user : vs.workspace)[k] = v;
      for (const l of vs.configListeners) l({ affectsConfiguration: (s) => s === "kestrel" || s === `kestrel.${k}` });
    },
  });
  return {
    EventEmitter,
    ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
    workspace: {
      isTrusted: true,
      getConfiguration: configuration,
      onDidChangeConfiguration: (l: Listener) => {
        vs.configListeners.push(l);
        return { dispose: () => undefined };
      },
    },
    window: {
      showInputBox: async (o: { prompt: string }) => {
        vs.prompts.push(o.prompt);
        return vs.inputs.shift();
      },
      showInformationMessage: async (message: string) => {
        vs.infos.push(message);
        return message.includes("needs its own API key") ? vs.infoChoice : undefined;
      },
      showQuickPick: async (items: { value?: string; label: string }[]) => items.find((i) => (i.value ?? i.label) === vs.pick),
    },
  };
});

import { ApiKey } from "../src/apiKey";
import { LEGACY_SLOT, needsKey, origin, providerOfKeyShape, slotOf } from "../src/keyBinding";
import { selectProvider } from "../src/quickPicks";
import { Redactor } from "../src/redact";
import { viewStatus } from "../src/statusView";

class FakeSecrets {
  readonly stored = new Map<string, string>();
  private listeners: ((e: { key: string }) => void)[] = [];
  onDidChange = (l: (e: { key: string }) => void) => {
    this.listeners.push(l);
    return { dispose: () => undefined };
  };
  async get(key: string) {
    return this.stored.get(key);
  }
  async store(key: string, value: string) {
    this.stored.set(key, value);
    for (const l of this.listeners) l({ key });
  }
  async delete(key: string) {
    this.stored.delete(key);
    for (const l of this.listeners) l({ key });
  }
  async keys() {
    return [...this.stored.keys()];
  }
}

const GROQ_KEY = "gsk_groq0a1b2c3d4e5f6a7b8c9d";
const CEREBRAS_KEY = "csk-cerebras0a1b2c3d4e5f6a7b";
const OPENAI_KEY = "sk-openai0a1b2c3d4e5f6a7b8c";

async function setSetting(layer: "user" | "workspace", key: string, value: unknown): Promise<void> {
  const { config } = await import("../src/config");
  await config().update(key, value, layer === "user" ? 1 : 2);
}

async function started(secrets = new FakeSecrets()): Promise<{ apiKey: ApiKey; secrets: FakeSecrets; changes: () => number }> {
  const apiKey = new ApiKey(secrets as never, new Redactor());
  let changes = 0;
  apiKey.onDidChange(() => changes++);
  await apiKey.load();
  return { apiKey, secrets, changes: () => changes };
}

beforeEach(() => {
  vs.user = {};
  vs.workspace = {};
  vs.configListeners = [];
  vs.inputs = [];
  vs.prompts = [];
  vs.infos = [];
  vs.infoChoice = undefined;
  vs.pick = undefined;
});

describe("API keys per provider and endpoint", () => {
  it("a key is handed over only while the provider it was entered for is selected", async () => {
    vs.user.provider = "groq";
    const { apiKey, changes } = await started();
    vs.inputs.push(GROQ_KEY);
    await apiKey.prompt();
    expect(apiKey.value).toEqual({ provider: "groq", apiKey: GROQ_KEY });
    expect(vs.prompts[0]).toContain("groq (its default endpoint)");

    await setSetting("user", "provider", "cerebras");
    await vi.waitFor(() => expect(apiKey.value).toBeUndefined());
    await setSetting("user", "provider", "groq");
    await vi.waitFor(() => expect(apiKey.value?.apiKey).toBe(GROQ_KEY));
    expect(changes()).toBeGreaterThanOrEqual(3); // set, gone, back: the server is told each time
  });

  it("a workspace that points kestrel.baseUrl (or a raw transport) at its own host gets no stored key", async () => {
    vs.user.provider = "openai";
    const { apiKey } = await started();
    vs.inputs.push(OPENAI_KEY);
    await apiKey.prompt();
    expect(apiKey.value?.apiKey).toBe(OPENAI_KEY);

    await setSetting("workspace", "baseUrl", "https://api.openai.com.evil.example/v1");
    await vi.waitFor(() => expect(apiKey.value).toBeUndefined());
    await setSetting("workspace", "provider", "chat");
    await vi.waitFor(() => expect(apiKey.value).toBeUndefined());
    delete vs.workspace.baseUrl;
    delete vs.workspace.provider;
    await setSetting("user", "provider", "openai");
    await vi.waitFor(() => expect(apiKey.value?.apiKey).toBe(OPENAI_KEY));
  });

  it("a key goes to the server bound to where it was entered, whatever spelling the settings use now", async () => {
    vs.user.provider = "openai";
    vs.user.baseUrl = "https://gateway.corp.example/v1";
    const { apiKey } = await started();
    vs.inputs.push(OPENAI_KEY);
    await apiKey.prompt();
    expect(apiKey.value).toEqual({ provider: "openai", baseUrl: "https://gateway.corp.example:443", apiKey: OPENAI_KEY });
    // Node's URL reads this as the gateway, the server as evil.example: the key is not handed over for it.
    await setSetting("workspace", "baseUrl", "https://gateway.corp.example:443\\@evil.example/v1");
    await vi.waitFor(() => expect(apiKey.value).toBeUndefined());
    // A path of the same origin keeps the key, bound to the origin (the server compares origins).
    await setSetting("workspace", "baseUrl", "https://gateway.corp.example/other/v1");
    await vi.waitFor(() => expect(apiKey.value).toEqual({ provider: "openai", baseUrl: "https://gateway.corp.example:443", apiKey: OPENAI_KEY }));
  });

  it("a provider name in another case is that preset, not a raw transport that shares a key", async () => {
    vs.user.provider = "chat";
    const { apiKey } = await started();
    vs.inputs.push(OPENAI_KEY);
    await apiKey.prompt();
    expect(apiKey.value).toEqual({ provider: "chat", apiKey: OPENAI_KEY });
    await setSetting("workspace", "provider", "Ollama"); // the server reads it as the ollama preset
    await vi.waitFor(() => expect(apiKey.value).toBeUndefined());
    await setSetting("workspace", "provider", "fim"); // another raw transport to the same default endpoint
    await vi.waitFor(() => expect(apiKey.value).toEqual({ provider: "fim", apiKey: OPENAI_KEY }));
  });

  it("the key prompt says where the key will go, and that the workspace chose it", async () => {
    vs.user.provider = "chat";
    vs.workspace.baseUrl = "http://203.0.113.9:8080/v1";
    const { apiKey, secrets } = await started();
    vs.inputs.push("custom-key-0123456789");
    await apiKey.prompt();
    expect(vs.prompts[0]).toContain("http://203.0.113.9:8080");
    expect(vs.prompts[0]).toContain("This workspace's settings choose");
    expect(secrets.stored.get(slotOf({ provider: "chat", baseUrl: "http://203.0.113.9:8080/v1" }))).toBe("custom-key-0123456789");
  });

  it('"Switch provider" asks for the new provider\'s own key and keeps the old one for the old provider', async () => {
    vs.user.provider = "groq";
    const { apiKey, secrets } = await started();
    vs.inputs.push(GROQ_KEY);
    await apiKey.prompt();

    vs.pick = "cerebras";
    vs.infoChoice = "Set API Key";
    vs.inputs.push(CEREBRAS_KEY);
    await selectProvider(apiKey);
    expect(vs.infos.some((m) => m.includes("cerebras") && m.includes("needs its own API key"))).toBe(true);
    await vi.waitFor(() => expect(apiKey.value).toEqual({ provider: "cerebras", apiKey: CEREBRAS_KEY }));
    expect(secrets.stored.get(slotOf({ provider: "groq" }))).toBe(GROQ_KEY);

    vs.pick = "groq"; // a key is stored for groq: nothing to ask
    const asked = vs.infos.length;
    await selectProvider(apiKey);
    expect(vs.infos.length).toBe(asked);
    await vi.waitFor(() => expect(apiKey.value).toEqual({ provider: "groq", apiKey: GROQ_KEY }));
  });

  it("an earlier version's single key is bound by the user's own settings, never the workspace's", async () => {
    vs.workspace.provider = "chat";
    vs.workspace.baseUrl = "https://evil.example/v1";
    const secrets = new FakeSecrets();
    secrets.stored.set(LEGACY_SLOT, GROQ_KEY); // no user provider: its shape says Groq
    const { apiKey } = await started(secrets);
    expect(secrets.stored.has(LEGACY_SLOT)).toBe(false);
    expect(secrets.stored.get(slotOf({ provider: "groq" }))).toBe(GROQ_KEY);
    expect(apiKey.value).toBeUndefined(); // the workspace's endpoint gets nothing

    const other = new FakeSecrets();
    other.stored.set(LEGACY_SLOT, "plain-key-0123456789");
    vs.user.provider = "cerebras";
    await started(other);
    expect(other.stored.get(slotOf({ provider: "cerebras" }))).toBe("plain-key-0123456789");
  });
});

describe("key bindings", () => {
  it("compare scheme, host and port, not the path or the spelling", () => {
    expect(origin("https://API.openai.com/v1")).toBe("https://api.openai.com:443");
    // Read differently by Node's URL and Python's urlsplit: bound to nothing (keyBinding.ts, keys.py).
    expect(origin("https://api.openai.com@evil.example/v1")).toBeUndefined();
    expect(origin("https://gateway.corp.example:443\\@evil.example/v1")).toBeUndefined();
    expect(origin("https://gateway.corp.example /v1")).toBeUndefined();
    expect(origin("https://api.openai.com/v1?from=a@b")).toBe("https://api.openai.com:443");
    expect(slotOf({ provider: "chat", baseUrl: "http://127.0.0.1:8765/v1" })).toBe(slotOf({ provider: "fim", baseUrl: "http://127.0.0.1:8765/other" }));
    expect(slotOf({ provider: "chat", baseUrl: "http://127.0.0.1:8765/v1" })).not.toBe(slotOf({ provider: "chat", baseUrl: "https://127.0.0.1:8765/v1" }));
    expect(slotOf({ provider: "openai" })).not.toBe(slotOf({ provider: "openai", baseUrl: "https://proxy.example/v1" }));
    expect(slotOf({ provider: "groq" })).not.toBe(slotOf({ provider: "cerebras" }));
  });

  it("hosted presets and remote raw endpoints need a key, local servers do not", () => {
    expect(needsKey({ provider: "groq" })).toBe(true);
    expect(needsKey({ provider: "ollama" })).toBe(false);
    expect(needsKey({ provider: "chat", baseUrl: "http://127.0.0.1:8000/v1" })).toBe(false);
    expect(needsKey({ provider: "chat", baseUrl: "https://llm.example.com/v1" })).toBe(true);
  });

  it("an earlier version's key names its provider by its shape", () => {
    expect(providerOfKeyShape(GROQ_KEY)).toBe("groq");
    expect(providerOfKeyShape(CEREBRAS_KEY)).toBe("cerebras");
    expect(providerOfKeyShape(OPENAI_KEY)).toBe("openai");
    expect(providerOfKeyShape("sk-ant-api03-abcdef")).toBeUndefined();
  });

  it("the status tooltip says which key is missing while the provider is ready", () => {
    const message = 'no API key for cerebras at https://api.cerebras.ai:443: run "Kestrel: Set API Key" with this provider selected or set CEREBRAS_API_KEY';
    const v = viewStatus({ phase: "running", enabled: true, status: { state: "ready", provider: "cerebras", model: "m", message } });
    expect(v.tooltip).toContain(message);
  });
});
