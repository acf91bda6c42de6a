/**
 * Kestrel's VS Code client: finds and starts `kestrel-lsp` over stdio, forwards settings and the
 * API key, gates inline completions (enabled / per language / debounce) and renders the status.
 * Inline completions themselves come from vscode-languageclient's built-in support for
 * `textDocument/inlineCompletion`.
 */
import * as vscode from "vscode";
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";
import * as readline from "node:readline";
import * as fs from "node:fs";
import { debounce } from "./debounce";
import { RollingStats } from "./latency";
import { InstallError, installPrivateServer, privateVenvDir } from "./install";
import { probeKestrel } from "./process";
import { Redactor, parseServerLogLine } from "./redact";
import { RestartPolicy } from "./restartPolicy";
import {
  PROBE_SCRIPT,
  describeLaunch,
  interpreterFromPythonApi,
  launchCandidates,
  splitCommand,
  venvPython,
  type Launch,
} from "./serverCommand";
import {
  EFFORTS,
  KEYED_PRESETS,
  PRESETS,
  TRANSPORTS,
  buildServerSettings,
  initializationOptions,
  isLanguageEnabled,
  needsRestart,
  readGates,
  shouldComplete,
  type ClientGates,
  type ServerSettings,
} from "./settings";
import { viewStatus, type ClientPhase, type KestrelStatus } from "./statusView";
import { ChatViewProvider } from "./chat/chatView";
import { InlineEditController } from "./edit/inlineEdit";
import { NextEditController } from "./edit/nextEdit";

const SECRET_KEY = "kestrel.apiKey";

function config(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration("kestrel");
}

/** A LogOutputChannel that redacts secrets from everything written to it. */
function redactingChannel(inner: vscode.LogOutputChannel, redactor: Redactor): vscode.LogOutputChannel {
  const wrapped = new Set(["trace", "debug", "info", "warn", "error", "append", "appendLine", "replace"]);
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof prop === "string" && wrapped.has(prop) && typeof value === "function") {
        return (first: unknown, ...rest: unknown[]) =>
          (value as (...a: unknown[]) => unknown).call(
            target,
            typeof first === "string" ? redactor.redact(first) : first instanceof Error ? redactor.redact(first.stack ?? first.message) : first,
            ...rest.map((r) => (typeof r === "string" ? redactor.redact(r) : r)),
          );
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

class Kestrel implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private clientDisposables: vscode.Disposable[] = [];
  private readonly disposables: vscode.Disposable[] = [];
  private readonly redactor = new Redactor();
  private chat: ChatViewProvider | undefined;
  private untrustedAnswer: Promise<boolean> | undefined;
  private readonly log: vscode.LogOutputChannel;
  private readonly statusItem: vscode.StatusBarItem;
  private readonly restarts = new RestartPolicy(5, 3 * 60_000);
  private readonly roundTrips = new RollingStats(25);
  private phase: ClientPhase = "starting";
  private status: KestrelStatus | undefined;
  private gates: ClientGates = readGates(config());
  private startedWith: ServerSettings | undefined;
  private starting: Promise<void> | undefined;
  private installing = false;
  private stopping = false;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.log = redactingChannel(vscode.window.createOutputChannel("Kestrel", { log: true }), this.redactor);
    this.statusItem = vscode.window.createStatusBarItem("kestrel.status", vscode.StatusBarAlignment.Right, 100);
    this.statusItem.name = "Kestrel";
    this.statusItem.command = "kestrel.showMenu";
    this.disposables.push(this.log, this.statusItem);
    this.renderStatus();
    this.statusItem.show();

    const cmd = (id: string, fn: (...args: unknown[]) => unknown) =>
      this.disposables.push(vscode.commands.registerCommand(id, fn));
    cmd("kestrel.toggleInlineCompletions", () => this.toggle());
    cmd("kestrel.setApiKey", () => this.setApiKey());
    cmd("kestrel.clearApiKey", () => this.clearApiKey());
    cmd("kestrel.selectEffort", () => this.selectEffort());
    cmd("kestrel.selectProvider", () => this.selectProvider());
    cmd("kestrel.showMenu", () => this.showMenu());
    cmd("kestrel.showLogs", () => this.log.show(true));

    // The chat view talks to whichever client is running now (it survives server restarts).
    const chat = new ChatViewProvider(context, () => (this.client?.isRunning() ? this.client : undefined));
    this.disposables.push(
      chat,
      vscode.window.registerWebviewViewProvider(ChatViewProvider.viewId, chat, { webviewOptions: { retainContextWhenHidden: true } }),
    );
    cmd("kestrel.focusChat", () => vscode.commands.executeCommand(`${ChatViewProvider.viewId}.focus`));
    cmd("kestrel.newChat", () => chat.newChat());
    const running = () => (this.client?.isRunning() ? this.client : undefined);
    const inlineEdits = new InlineEditController(running);
    this.disposables.push(inlineEdits, new NextEditController(running, inlineEdits));
    this.chat = chat;
    cmd("kestrel.restartServer", () => this.restart("restart requested"));
    cmd("kestrel.installServer", () => this.install());

    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => this.configurationChanged(e)),
      vscode.window.onDidChangeActiveTextEditor(() => this.renderStatus()),
      context.secrets.onDidChange((e) => {
        if (e.key === SECRET_KEY) void this.apiKeyChanged();
      }),
    );
  }

  /** Workspace trust: in an untrusted workspace, ask once before any of its code goes to a model. */
  private mayUseCode(): Promise<boolean> {
    if (vscode.workspace.isTrusted) return Promise.resolve(true);
    this.untrustedAnswer ??= Promise.resolve(
      vscode.window.showWarningMessage(
        "Kestrel: this workspace is not trusted. Send its code to the model for completions and fixes?",
        "Allow for this session",
        "Not now",
      ),
    ).then((choice) => choice === "Allow for this session");
    return this.untrustedAnswer;
  }

  // ---------------------------------------------------------------- server lifecycle
  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async doStart(): Promise<void> {
    this.setPhase("starting");
    const launch = await this.resolveLaunch();
    if (!launch) return;
    this.log.info(`Starting the Kestrel language server: ${describeLaunch(launch)}`);

    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      options: { env: { ...process.env, PYTHONUNBUFFERED: "1", PYTHONIOENCODING: "utf-8" } },
    };
    const clientOptions: LanguageClientOptions = {
      // Inline completions in any language, in files and unsaved editors.
      documentSelector: [{ scheme: "file" }, { scheme: "untitled" }, { scheme: "vscode-notebook-cell" }],
      outputChannel: this.log,
      traceOutputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never, // the status bar and notifications report problems
      stdioOptions: {
        stdout: (input, channel) => this.pipeLines(input, (l) => channel.info(l)),
        stderr: (input, channel) =>
          this.pipeLines(input, (line) => {
            const { level, text } = parseServerLogLine(line);
            channel[level](text);
          }),
      },
      initializationOptions: () => {
        this.startedWith = buildServerSettings(config());
        return initializationOptions(this.startedWith, this.apiKeyCache);
      },
      middleware: {
        // "Explain with Kestrel" opens the answer in the chat panel instead of a notification.
        executeCommand: async (command, args, next) => {
          if (command === "kestrel.explain" && this.chat) return this.chat.explain(args[0]);
          return next(command, args);
        },
        resolveCodeAction: async (item, token, next) => ((await this.mayUseCode()) ? next(item, token) : item),
        provideInlineCompletionItems: async (document, position, context, token, next) => {
          if (!shouldComplete(this.gates, document.languageId)) return null;
          if (!(await this.mayUseCode())) return null;
          if (context.triggerKind === vscode.InlineCompletionTriggerKind.Automatic && this.gates.debounceMs > 0) {
            if (!(await debounce(this.gates.debounceMs, token))) return null;
          }
          const started = performance.now();
          const result = await next(document, position, context, token);
          if (!token.isCancellationRequested) this.recordRoundTrip(performance.now() - started);
          return result;
        },
      },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => this.serverClosed(),
      },
    };

    const client = new LanguageClient("kestrel", "Kestrel", serverOptions, clientOptions);
    this.client = client;
    this.clientDisposables.push(
      client.onDidChangeState((e) => {
        if (e.newState === State.Running) this.setPhase("running");
        else if (e.newState === State.Starting) this.setPhase("starting");
        else if (e.newState === State.Stopped && this.phase !== "crashed") this.setPhase("stopped");
      }),
      client.onNotification("kestrel/status", (s: KestrelStatus) => this.setStatus(s)),
    );
    try {
      await client.start();
    } catch (err) {
      this.log.error(`The Kestrel language server did not start: ${String((err as Error)?.message ?? err)}`);
      this.setPhase("crashed");
      void vscode.window
        .showErrorMessage(`Kestrel: the language server did not start (${describeLaunch(launch)}).`, "Show Logs", "Open Settings")
        .then((choice) => this.onChoice(choice));
      return;
    }
    this.setPhase("running");
    client
      .sendRequest<KestrelStatus>("kestrel/getStatus", {})
      .then((s) => this.setStatus(s), () => undefined);
  }

  private recordRoundTrip(ms: number): void {
    const s = this.roundTrips.push(ms);
    if (s) {
      this.log.info(
        `inline completion round trip (extension host <-> server), last ${s.n}: p50 ${s.p50.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms, max ${s.max.toFixed(1)} ms`,
      );
    }
  }

  private pipeLines(input: NodeJS.ReadableStream, onLine: (line: string) => void): void {
    readline.createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 }).on("line", onLine);
  }

  private serverClosed() {
    if (this.stopping) return { action: CloseAction.DoNotRestart, handled: true };
    const { restart, count } = this.restarts.crashed();
    this.status = undefined;
    if (restart) {
      this.log.warn(`The Kestrel language server exited unexpectedly; restarting (${count}/${this.restarts.max}).`);
      void vscode.window.showWarningMessage(
        `Kestrel: the language server stopped unexpectedly and was restarted (${count}/${this.restarts.max} in 3 minutes).`,
        "Show Logs",
      ).then((c) => this.onChoice(c));
      this.setPhase("starting");
      return { action: CloseAction.Restart, handled: true };
    }
    this.setPhase("crashed");
    this.log.error(`The Kestrel language server crashed ${count} times in 3 minutes; not restarting it.`);
    void vscode.window
      .showErrorMessage(
        `Kestrel: the language server crashed ${count} times in 3 minutes and was not restarted.`,
        "Restart",
        "Show Logs",
      )
      .then((c) => this.onChoice(c));
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    for (const d of this.clientDisposables.splice(0)) d.dispose();
    if (client) {
      this.stopping = true;
      try {
        await client.stop(5000);
      } catch (err) {
        this.log.warn(`Stopping the language server: ${String((err as Error)?.message ?? err)}`);
      } finally {
        this.stopping = false;
      }
    }
    this.status = undefined;
  }

  async restart(reason: string): Promise<void> {
    this.log.info(`Restarting the language server: ${reason}`);
    await this.starting?.catch(() => undefined);
    await this.stop();
    this.restarts.reset();
    await this.start();
  }

  /** The first candidate whose interpreter has `kestrel`; otherwise offer to install it. */
  private async resolveLaunch(): Promise<Launch | undefined> {
    const cfg = config();
    const venvPy = venvPython(privateVenvDir(this.context.globalStorageUri.fsPath));
    const command = cfg.get<string[] | string>("server.command");
    const python = cfg.get<string>("server.python")?.trim();
    const explicit = !!python || splitCommand(command).length > 0;
    const candidates = launchCandidates({
      command,
      python,
      pythonExtension: explicit ? undefined : await this.pythonExtensionInterpreter(),
      privateVenvPython: fs.existsSync(venvPy) ? venvPy : undefined,
      logLevel: cfg.get<string>("server.logLevel"),
    });
    const problems: string[] = [];
    for (const c of candidates) {
      if (!c.python) return c;
      const probe = await probeKestrel(c.python, PROBE_SCRIPT);
      if (probe.result === "installed") {
        if (c !== candidates[0]) this.log.info(`Using ${describeLaunch(c)}: ${problems.join("; ")}`);
        return c;
      }
      problems.push(probe.result === "missing" ? `kestrel is not installed for ${c.python}` : `${c.python} cannot run (${probe.detail})`);
    }
    this.log.warn(`Kestrel language server not found: ${problems.join("; ")}.`);
    this.setPhase("notInstalled");
    void this.offerInstall(candidates[0].python ?? "python3", problems[0]);
    return undefined;
  }

  private async pythonExtensionInterpreter(): Promise<string | undefined> {
    const ext = vscode.extensions.getExtension("ms-python.python");
    if (!ext) return undefined;
    try {
      const api = ext.isActive ? ext.exports : await Promise.race([ext.activate(), new Promise((r) => setTimeout(r, 10_000))]);
      return await interpreterFromPythonApi(api, vscode.window.activeTextEditor?.document.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri);
    } catch (err) {
      this.log.warn(`Python extension interpreter unavailable: ${String(err)}`);
      return undefined;
    }
  }

  private async offerInstall(python: string, problem: string): Promise<void> {
    const choice = await vscode.window.showWarningMessage(
      `Kestrel: the language server is not installed (${problem}). Install it into a private environment for Kestrel?`,
      "Install",
      "Choose Python…",
      "Show Logs",
    );
    if (choice === "Install") await this.install(python);
    else if (choice === "Choose Python…") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "kestrel.server.python");
    } else this.onChoice(choice);
  }

  async install(basePython?: string): Promise<void> {
    if (this.installing) return;
    this.installing = true;
    const cfg = config();
    const python = basePython ?? (cfg.get<string>("server.python") || (await this.pythonExtensionInterpreter()) || "python3");
    try {
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: "Kestrel: installing the language server", cancellable: true },
        async (progress, token) => {
          const abort = new AbortController();
          token.onCancellationRequested(() => abort.abort());
          await installPrivateServer({
            basePython: python,
            extensionPath: this.context.extensionPath,
            globalStoragePath: this.context.globalStorageUri.fsPath,
            installSource: cfg.get<string>("server.installSource"),
            signal: abort.signal,
            reporter: { step: (message) => progress.report({ message }), log: (line) => this.log.info(`[install] ${line}`) },
          });
        },
      );
      void vscode.window.showInformationMessage("Kestrel: the language server is installed.");
      await this.restart("installed");
    } catch (err) {
      const msg = err instanceof InstallError ? err.message : String((err as Error)?.message ?? err);
      this.log.error(`Install failed: ${msg}`);
      void vscode.window.showErrorMessage(`Kestrel: ${msg}`, "Show Logs").then((c) => this.onChoice(c));
    } finally {
      this.installing = false;
    }
  }

  // ---------------------------------------------------------------- settings & key
  private async configurationChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!e.affectsConfiguration("kestrel")) return;
    this.gates = readGates(config());
    this.renderStatus();
    if (e.affectsConfiguration("kestrel.server")) {
      await this.restart("kestrel.server settings changed");
      return;
    }
    const client = this.client;
    if (!client || !client.isRunning()) return;
    const next = buildServerSettings(config());
    if (this.startedWith && needsRestart(this.startedWith, next)) {
      await this.restart("a setting was cleared");
      return;
    }
    await client.sendNotification(DidChangeConfigurationNotification.type, { settings: { kestrel: next } });
  }

  private apiKeyCache: string | undefined;

  async loadApiKey(): Promise<void> {
    this.apiKeyCache = (await this.context.secrets.get(SECRET_KEY)) || undefined;
    this.redactor.add(this.apiKeyCache);
  }

  private async apiKeyChanged(): Promise<void> {
    const previous = this.apiKeyCache;
    await this.loadApiKey();
    if (previous === this.apiKeyCache) return;
    const client = this.client;
    this.log.info(`API key ${this.apiKeyCache ? "changed" : "removed"}${client?.isRunning() ? "; updating the server" : ""}.`);
    if (!client?.isRunning()) return;
    if (this.apiKeyCache) await client.sendNotification("kestrel/setApiKey", { apiKey: this.apiKeyCache });
    else await this.restart("API key cleared"); // a key given at start-up can only be dropped by a new process
  }

  private async setApiKey(): Promise<void> {
    const provider = config().get<string>("provider") || "the model provider";
    const key = await vscode.window.showInputBox({
      title: "Kestrel: Set API Key",
      prompt: `API key for ${provider}. Stored in VS Code's secret storage, never in settings or logs.`,
      password: true,
      ignoreFocusOut: true,
      placeHolder: "sk-…",
      validateInput: (v) => (v.trim().length < 4 ? "Enter the API key" : undefined),
    });
    if (!key) return;
    this.redactor.add(key.trim());
    await this.context.secrets.store(SECRET_KEY, key.trim());
    void vscode.window.showInformationMessage("Kestrel: API key saved in secret storage.");
  }

  private async clearApiKey(): Promise<void> {
    await this.context.secrets.delete(SECRET_KEY);
    void vscode.window.showInformationMessage("Kestrel: API key removed.");
  }

  // ---------------------------------------------------------------- commands
  private target(key: string): vscode.ConfigurationTarget {
    const inspect = config().inspect(key);
    if (inspect?.workspaceFolderValue !== undefined) return vscode.ConfigurationTarget.WorkspaceFolder;
    if (inspect?.workspaceValue !== undefined) return vscode.ConfigurationTarget.Workspace;
    return vscode.ConfigurationTarget.Global;
  }

  private async update(key: string, value: unknown): Promise<void> {
    await config().update(key, value, this.target(key));
  }

  async toggle(): Promise<void> {
    const enabled = !this.gates.enabled;
    await this.update("completion.enabled", enabled);
    this.gates = { ...this.gates, enabled };
    this.renderStatus();
    if (!enabled) void vscode.commands.executeCommand("editor.action.inlineSuggest.hide");
    vscode.window.setStatusBarMessage(`Kestrel: inline completions ${enabled ? "on" : "off"}`, 2500);
  }

  private async selectEffort(): Promise<void> {
    const current = config().get<string>("effort") ?? "low";
    const pick = await vscode.window.showQuickPick(
      EFFORTS.map((e) => ({ label: e, description: e === current ? "current" : undefined })),
      { title: "Kestrel: reasoning effort (chat and fixes; inline completions always use low)" },
    );
    if (pick) await this.update("effort", pick.label);
  }

  private async selectProvider(): Promise<void> {
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
      await this.update("baseUrl", baseUrl);
      await this.update("model", model);
    }
    await this.update("provider", pick.value);
    if (KEYED_PRESETS.includes(pick.value) && !this.apiKeyCache) {
      const c = await vscode.window.showInformationMessage(`Kestrel: ${pick.value} needs an API key.`, "Set API Key");
      if (c) await this.setApiKey();
    }
  }

  private async showMenu(): Promise<void> {
    const cfg = config();
    const items: (vscode.QuickPickItem & { run?: () => unknown })[] = [
      {
        label: this.gates.enabled ? "$(circle-slash) Disable inline completions" : "$(check) Enable inline completions",
        run: () => this.toggle(),
      },
      { label: "$(dashboard) Switch effort", description: cfg.get<string>("effort") ?? "low", run: () => this.selectEffort() },
      {
        label: "$(server) Switch provider",
        description: [this.status?.provider || cfg.get<string>("provider") || "automatic", this.status?.model].filter(Boolean).join(" · "),
        run: () => this.selectProvider(),
      },
      { label: "$(key) Set API key…", description: this.apiKeyCache ? "a key is stored" : "no key stored", run: () => this.setApiKey() },
      { label: "$(output) Show logs", run: () => this.log.show(true) },
      { label: "$(debug-restart) Restart language server", run: () => this.restart("restart requested") },
    ];
    if (this.phase === "notInstalled") items.unshift({ label: "$(cloud-download) Install the language server", run: () => this.install() });
    const pick = await vscode.window.showQuickPick(items, { title: "Kestrel" });
    await pick?.run?.();
  }

  private onChoice(choice: string | undefined): void {
    if (choice === "Show Logs") this.log.show(true);
    else if (choice === "Restart") void this.restart("restart requested");
    else if (choice === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "kestrel.server");
  }

  // ---------------------------------------------------------------- status bar
  private setPhase(phase: ClientPhase): void {
    this.phase = phase;
    this.renderStatus();
  }

  private setStatus(status: KestrelStatus): void {
    this.status = status;
    this.renderStatus();
  }

  private renderStatus(): void {
    const language = vscode.window.activeTextEditor?.document.languageId;
    const view = viewStatus({
      phase: this.phase,
      status: this.status,
      enabled: this.gates.enabled,
      languageDisabled: language !== undefined && !isLanguageEnabled(this.gates.languages, language),
    });
    this.statusItem.text = view.text;
    this.statusItem.tooltip = view.tooltip;
    this.statusItem.accessibilityInformation = { label: view.text.replace(/\$\([^)]*\)\s*/g, ""), role: "button" };
    this.statusItem.backgroundColor =
      view.background === "error"
        ? new vscode.ThemeColor("statusBarItem.errorBackground")
        : view.background === "warning"
          ? new vscode.ThemeColor("statusBarItem.warningBackground")
          : undefined;
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

let kestrel: Kestrel | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  kestrel = new Kestrel(context);
  context.subscriptions.push(kestrel);
  await kestrel.loadApiKey();
  void kestrel.start();
}

export async function deactivate(): Promise<void> {
  await kestrel?.stop();
  kestrel = undefined;
}
