/** The quick picks: the status bar menu, the reasoning effort, the model provider. */
import * as vscode from "vscode";
import type { ApiKey } from "./apiKey";
import { config, updateSetting } from "./config";
import { bindingOf, describeBinding, needsKey } from "./keyBinding";
import type { InlineCompletions } from "./inlineCompletions";
import type { ServerInstaller } from "./serverInstaller";
import type { ServerLifecycle } from "./serverLifecycle";
import { EFFORTS, KEYED_PRESETS, PRESETS, TRANSPORTS } from "./settings";
import type { StatusBar } from "./statusBar";

export interface MenuDeps {
  log: vscode.LogOutputChannel;
  completions: InlineCompletions;
  apiKey: ApiKey;
  statusBar: StatusBar;
  server: ServerLifecycle;
  installer: ServerInstaller;
}

export async function selectEffort(): Promise<void> {
  const current = config().get<string>("effort") ?? "low";
  const pick = await vscode.window.showQuickPick(
    EFFORTS.map((e) => ({ label: e, description: e === current ? "current" : undefined })),
    { title: "Kestrel: reasoning effort (chat and fixes; inline completions always use low)" },
  );
  if (pick) await updateSetting("effort", pick.label);
}

export async function selectProvider(apiKey: ApiKey): Promise<void> {
  const current = config().get<string>("provider") ?? "";
  const items: (vscode.QuickPickItem & { value: string })[] = [
    { label: "(automatic)", value: "", description: "environment, else the embedded local model" },
    ...PRESETS.map((p) => ({ label: p, value: p, description: KEYED_PRESETS.includes(p) ? "needs an API key" : "local server" })),
    ...TRANSPORTS.map((t) => ({ label: t, value: t, description: "raw transport: set base URL and model" })),
  ].map((i) => (i.value === current ? { ...i, detail: "current" } : i));
  const pick = await vscode.window.showQuickPick(items, { title: "Kestrel: model provider" });
  if (!pick) return;
  if ((TRANSPORTS as readonly string[]).includes(pick.value)) {
    const baseUrl = await vscode.window.showInputBox({
      title: "Kestrel: base URL",
      value: config().get<string>("baseUrl") || "http://127.0.0.1:8000/v1",
      ignoreFocusOut: true,
    });
    if (baseUrl === undefined) return;
    const model = await vscode.window.showInputBox({ title: "Kestrel: model id", value: config().get<string>("model") || "", ignoreFocusOut: true });
    if (model === undefined) return;
    await updateSetting("baseUrl", baseUrl);
    await updateSetting("model", model);
  }
  await updateSetting("provider", pick.value);
  // Keys are kept per provider and endpoint: the key of the provider used so far is never sent to
  // this one, so ask for this one's key when none is stored.
  const binding = bindingOf(config());
  if (binding && needsKey(binding) && !(await apiKey.has(binding))) {
    const c = await vscode.window.showInformationMessage(
      `Kestrel: ${describeBinding(binding)} needs its own API key.`,
      "Set API Key",
    );
    if (c) await apiKey.prompt(binding);
  }
}

/** The status bar item's menu. */
export async function showMenu(d: MenuDeps): Promise<void> {
  const cfg = config();
  const status = d.statusBar.status;
  const items: (vscode.QuickPickItem & { run?: () => unknown })[] = [
    {
      label: d.completions.gates.enabled ? "$(circle-slash) Disable inline completions" : "$(check) Enable inline completions",
      run: () => d.completions.toggle(),
    },
    { label: "$(dashboard) Switch effort", description: cfg.get<string>("effort") ?? "low", run: () => selectEffort() },
    {
      label: "$(server) Switch provider",
      description: [status?.provider || cfg.get<string>("provider") || "automatic", status?.model].filter(Boolean).join(" · "),
      run: () => selectProvider(d.apiKey),
    },
    {
      label: "$(key) Set API key…",
      description: d.apiKey.value ? `a key is stored for ${describeBinding(d.apiKey.value)}` : "no key stored for this provider",
      run: () => d.apiKey.prompt(),
    },
    { label: "$(output) Show logs", run: () => d.log.show(true) },
    { label: "$(debug-restart) Restart language server", run: () => d.server.restart("restart requested") },
  ];
  if (d.statusBar.phase === "notInstalled") items.unshift({ label: "$(cloud-download) Install the language server", run: () => d.installer.install() });
  const pick = await vscode.window.showQuickPick(items, { title: "Kestrel" });
  await pick?.run?.();
}
