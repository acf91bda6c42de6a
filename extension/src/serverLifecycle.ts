/**
 * The language server's lifecycle: find and start it, restart it after a crash (bounded), restart
 * on demand, stop it, and keep it in step with the settings and the API key.
 */
import * as vscode from "vscode";
import { CloseAction, DidChangeConfigurationNotification, State, type LanguageClient, type Middleware } from "vscode-languageclient/node";
import { config } from "./config";
import { sameBinding, type BoundApiKey } from "./keyBinding";
import { createLanguageClient } from "./languageClient";
import type { Redactor } from "./redact";
import { RestartPolicy } from "./restartPolicy";
import { describeLaunch } from "./serverCommand";
import { locateServer } from "./serverLocator";
import { buildServerSettings, initializationOptions, needsRestart, type ServerSettings } from "./settings";
import type { StatusBar } from "./statusBar";
import { notify, onNotification, request, type ClientNotifications, type SetApiKeyParams } from "./protocol";
import { askModally } from "./serverQuestions";

export interface ServerDeps {
  context: vscode.ExtensionContext;
  log: vscode.LogOutputChannel;
  statusBar: StatusBar;
  /** The stored API key for the selected provider and endpoint, with what it is bound to. */
  apiKey: () => BoundApiKey | undefined;
  /** Applied to every message from the server before anything reads it. */
  redactor: Redactor;
  /** Each feature's client middleware. */
  middleware: Middleware;
  /** No interpreter has Kestrel: offer to install it. */
  notInstalled: (python: string, problem: string) => void;
}

export class ServerLifecycle {
  private client: LanguageClient | undefined;
  private clientDisposables: vscode.Disposable[] = [];
  private readonly restarts = new RestartPolicy(5, 3 * 60_000);
  private startedWith: ServerSettings | undefined;
  private starting: Promise<void> | undefined;
  private stopping = false;

  constructor(private readonly deps: ServerDeps) {}

  private get log(): vscode.LogOutputChannel {
    return this.deps.log;
  }

  private get statusBar(): StatusBar {
    return this.deps.statusBar;
  }

  /** The client while its server runs (the chat and edit features talk to whichever one that is). */
  readonly running = (): LanguageClient | undefined => (this.client?.isRunning() ? this.client : undefined);

  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async doStart(): Promise<void> {
    this.statusBar.setPhase("starting");
    const located = await locateServer(this.deps.context.globalStorageUri.fsPath, this.log);
    if ("missing" in located) {
      this.statusBar.setPhase("notInstalled");
      this.deps.notInstalled(located.missing.python, located.missing.problem);
      return;
    }
    const launch = located.launch;
    this.log.info(`Starting the Kestrel language server: ${describeLaunch(launch)}`);

    const client = createLanguageClient(launch, {
      log: this.log,
      initializationOptions: () => {
        this.startedWith = buildServerSettings(config());
        // The server binds this key to the endpoint in these same options: only the key stored for it.
        const key = this.deps.apiKey();
        const { provider, baseUrl } = this.startedWith;
        const selected = provider ? { provider, baseUrl } : undefined;
        return initializationOptions(this.startedWith, sameBinding(key, selected) ? key?.apiKey : undefined);
      },
      redact: (message) => this.deps.redactor.redactDeep(message),
      middleware: this.deps.middleware,
      closed: () => this.serverClosed(),
    });
    this.client = client;
    this.clientDisposables.push(
      client.onDidChangeState((e) => {
        if (e.newState === State.Running) this.statusBar.setPhase("running");
        else if (e.newState === State.Starting) this.statusBar.setPhase("starting");
        else if (e.newState === State.Stopped && this.statusBar.phase !== "crashed") this.statusBar.setPhase("stopped");
      }),
      onNotification(client, "kestrel/status", (s) => this.statusBar.setStatus(s)),
      // Before start: it then replaces the client's own handler (a toast) for every (re)start.
      client.onRequest("window/showMessageRequest", askModally),
    );
    try {
      await client.start();
    } catch (err) {
      this.log.error(`The Kestrel language server did not start: ${String((err as Error)?.message ?? err)}`);
      this.statusBar.setPhase("crashed");
      void vscode.window
        .showErrorMessage(`Kestrel: the language server did not start (${describeLaunch(launch)}).`, "Show Logs", "Open Settings")
        .then((choice) => this.onChoice(choice));
      return;
    }
    this.statusBar.setPhase("running");
    request(client, "kestrel/getStatus", {}).then((s) => this.statusBar.setStatus(s), () => undefined);
  }

  private serverClosed() {
    if (this.stopping) return { action: CloseAction.DoNotRestart, handled: true };
    const { restart, count } = this.restarts.crashed();
    this.statusBar.forgetStatus();
    if (restart) {
      this.log.warn(`The Kestrel language server exited unexpectedly; restarting (${count}/${this.restarts.max}).`);
      void vscode.window.showWarningMessage(
        `Kestrel: the language server stopped unexpectedly and was restarted (${count}/${this.restarts.max} in 3 minutes).`,
        "Show Logs",
      ).then((c) => this.onChoice(c));
      this.statusBar.setPhase("starting");
      return { action: CloseAction.Restart, handled: true };
    }
    this.statusBar.setPhase("crashed");
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
    this.statusBar.forgetStatus();
  }

  async restart(reason: string): Promise<void> {
    this.log.info(`Restarting the language server: ${reason}`);
    await this.starting?.catch(() => undefined);
    await this.stop();
    this.restarts.reset();
    await this.start();
  }

  /** A `kestrel.*` setting changed: restart for `kestrel.server.*` or a cleared value, else push the new settings. */
  async settingsChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
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

  /**
   * The key for the selected provider changed (set, removed, or another provider selected): hand it
   * to the running server with what it is bound to, or tell it to forget the keys it was given.
   */
  async apiKeyChanged(): Promise<void> {
    const key = this.deps.apiKey();
    const client = this.client;
    this.log.info(`API key ${key ? "changed" : "removed"}${client?.isRunning() ? "; updating the server" : ""}.`);
    if (!client?.isRunning()) return;
    const params: SetApiKeyParams = key ? { apiKey: key.apiKey, provider: key.provider, baseUrl: key.baseUrl } : { apiKey: null };
    await notify(client, "kestrel/setApiKey", params);
  }

  /** A `kestrel/*` notification to the running server (dropped when none runs). */
  async notify<M extends keyof ClientNotifications>(method: M, params: ClientNotifications[M]): Promise<void> {
    const client = this.running();
    if (client) await notify(client, method, params).catch(() => undefined);
  }

  /** The buttons on Kestrel's notifications. */
  readonly onChoice = (choice: string | undefined): void => {
    if (choice === "Show Logs") this.log.show(true);
    else if (choice === "Restart") void this.restart("restart requested");
    else if (choice === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "kestrel.server");
  };
}
