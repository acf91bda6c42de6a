/**
 * The model providers' API keys: kept in VS Code's SecretStorage (never in settings or logs), one
 * per provider and endpoint (keyBinding.ts), added to the redactor, and set/cleared by commands.
 * `value` is the key for the provider and endpoint selected now, with what it is bound to: the
 * server gets both and sends the key nowhere else. Switching the provider or the endpoint selects
 * that one's key, or none.
 */
import * as vscode from "vscode";
import { config } from "./config";
import {
  LEGACY_SLOT,
  bindingOf,
  canonical,
  describeBinding,
  isKeySlot,
  providerOfKeyShape,
  sameBinding,
  slotOf,
  type BoundApiKey,
  type KeyBinding,
} from "./keyBinding";
import type { Redactor } from "./redact";
import { KEYED_PRESETS } from "./settings";

export class ApiKey implements vscode.Disposable {
  private active: BoundApiKey | undefined;
  private loads = 0;
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly disposables: vscode.Disposable[];
  /** Fires when the key for the selected provider is now different (set, replaced, removed, or another provider selected). */
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly redactor: Redactor,
  ) {
    this.disposables = [
      this.changed,
      secrets.onDidChange((e) => {
        if (isKeySlot(e.key)) void this.reload();
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration("kestrel.provider") || e.affectsConfiguration("kestrel.baseUrl")) void this.reload();
      }),
    ];
  }

  /** The key for the provider and endpoint selected now, with its binding (as of the last load). */
  get value(): BoundApiKey | undefined {
    return this.active;
  }

  async load(): Promise<void> {
    const load = ++this.loads;
    await this.migrateLegacyKey();
    const binding = bindingOf(config());
    const key = binding ? (await this.secrets.get(slotOf(binding))) || undefined : undefined;
    if (load !== this.loads) return; // the settings changed meanwhile: the newer load decides
    this.redactor.add(key);
    this.active = binding && key ? { ...canonical(binding), apiKey: key } : undefined;
  }

  private async reload(): Promise<void> {
    const previous = this.active;
    await this.load();
    const now = this.active;
    if (previous?.apiKey !== now?.apiKey || !sameBinding(previous, now)) this.changed.fire();
  }

  /** Whether a key is stored for `binding`. */
  async has(binding: KeyBinding): Promise<boolean> {
    return Boolean(await this.secrets.get(slotOf(binding)));
  }

  /** "Kestrel: Set API Key": for the provider and endpoint selected now, or `binding`. */
  async prompt(binding: KeyBinding | undefined = bindingOf(config())): Promise<boolean> {
    binding ??= await pickKeyedProvider();
    if (!binding) return false;
    const where = describeBinding(binding);
    const key = await vscode.window.showInputBox({
      title: `Kestrel: API key for ${binding.provider}`,
      prompt: `Sent only to ${where}. Stored in VS Code's secret storage, never in settings or logs.${workspaceChoosesEndpoint() ? " This workspace's settings choose this provider or endpoint." : ""}`,
      password: true,
      ignoreFocusOut: true,
      placeHolder: "sk-…",
      validateInput: (v) => (v.trim().length < 4 ? "Enter the API key" : undefined),
    });
    if (!key) return false;
    this.redactor.add(key.trim());
    await this.secrets.store(slotOf(binding), key.trim());
    await this.reload(); // `value` is current before this returns
    void vscode.window.showInformationMessage(`Kestrel: API key for ${where} saved in secret storage.`);
    return true;
  }

  /** "Kestrel: Clear API Key": the selected provider's key (and an earlier version's single key). */
  async clear(): Promise<void> {
    const binding = bindingOf(config());
    if (binding) await this.secrets.delete(slotOf(binding));
    await this.secrets.delete(LEGACY_SLOT);
    await this.reload();
    void vscode.window.showInformationMessage(
      binding ? `Kestrel: API key for ${describeBinding(binding)} removed.` : "Kestrel: API key removed.",
    );
  }

  /**
   * Earlier versions kept one key and sent it to whichever provider was set. Bind it to the
   * provider in the user's own settings (never the workspace's), else the one its shape names;
   * when neither says, it stays unused until "Set API Key" replaces it.
   */
  private async migrateLegacyKey(): Promise<void> {
    const legacy = await this.secrets.get(LEGACY_SLOT);
    if (!legacy) return;
    this.redactor.add(legacy);
    const cfg = config();
    const userProvider = cfg.inspect<string>("provider")?.globalValue;
    const userBaseUrl = cfg.inspect<string>("baseUrl")?.globalValue;
    const shape = providerOfKeyShape(legacy);
    const binding: KeyBinding | undefined = userProvider
      ? userBaseUrl ? { provider: userProvider, baseUrl: userBaseUrl } : { provider: userProvider }
      : shape ? { provider: shape } : undefined;
    if (!binding) return;
    if (!(await this.has(binding))) await this.secrets.store(slotOf(binding), legacy);
    await this.secrets.delete(LEGACY_SLOT);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** No provider is selected: ask which one the key is for. */
async function pickKeyedProvider(): Promise<KeyBinding | undefined> {
  const pick = await vscode.window.showQuickPick(
    KEYED_PRESETS.map((p) => ({ label: p })),
    { title: "Kestrel: which provider is this API key for?" },
  );
  return pick ? { provider: pick.label } : undefined;
}

/** Whether the workspace's own settings (`.vscode/settings.json`) set the provider or the endpoint. */
function workspaceChoosesEndpoint(): boolean {
  const cfg = config();
  return ["provider", "baseUrl"].some((k) => {
    const i = cfg.inspect(k);
    return i?.workspaceValue !== undefined || i?.workspaceFolderValue !== undefined;
  });
}
