/**
 * The server's custom `kestrel/*` protocol: the params and result of each request, the params of
 * each notification. The same types as pyserver/kestrel/protocol.py and docs/protocol.md;
 * tests/test_protocol.py fails when the three disagree (method names, field names, which fields
 * are optional or may be null). Every object type is a named interface here (the test reads this
 * file). Not to be confused with chat/protocol.ts: the chat view's messages to its webview.
 */

// -- shared ---------------------------------------------------------------------------------
export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface TextEdit {
  range: Range;
  newText: string;
}

/** A chat message; `content` may also be OpenAI's multi-part form (a list of parts). */
export interface ChatMessage {
  role: string;
  content: string | Array<Record<string, unknown>>;
}

export type SteerMode = "native" | "emulated";

/** Where a steer landed in a streamed answer. */
export interface SteerMark {
  at: number;
  text: string;
  mode: SteerMode;
  commitMs: number;
}

/** A span of a workspace file: what a chat prompt was given, or what an answer cited. */
export interface SourceRef {
  uri: string;
  path: string;
  range: Range;
  name?: string;
}

/** A request without params (`{}` or null; ignored). */
export interface NoParams {}

// -- requests -------------------------------------------------------------------------------
export interface ChatParams {
  id?: string;
  messages?: ChatMessage[];
  prompt?: string;
  codebase?: boolean;
}

export interface ChatResult {
  id: string;
  text: string;
  ttftMs: number | null;
  steers: SteerMark[];
  lastSegment: string;
  error?: string;
  stopped?: boolean;
  sources?: SourceRef[];
  citations?: SourceRef[];
  inventedCitations?: string[];
  inventedPaths?: string[];
  trimmed?: string;
  hitTokenLimit?: boolean;
}

export interface SteerParams {
  id: string;
  text: string;
}

export interface SteerResult {
  accepted: boolean;
  mode?: SteerMode | "queued";
  error?: string;
}

export interface StopChatParams {
  id: string;
}

export interface AgentParams {
  id?: string;
  messages?: ChatMessage[];
  prompt?: string;
  maxSteps?: number;
  /** Offer the write tools: each change is proposed as a workspace/applyEdit the user reviews (sent in a trusted workspace only). */
  allowWrites?: boolean;
  /** Offer run_command: each command is put to the user (a modal: Run / Don't run) and runs only on Run (sent in a trusted workspace only). */
  allowCommands?: boolean;
  /** Commands that run without asking (the user settings' kestrel.agent.allowedCommands, never a workspace's). */
  allowedCommands?: string[];
}

export interface AgentToolCall {
  name: string;
  arguments: Record<string, unknown>;
  found: "native" | "text" | "repaired";
  ok: boolean;
  result: string;
}

export interface AgentStepParams {
  id: string;
  step: number;
  calls: AgentToolCall[];
}

export interface AgentReviewParams {
  id: string;
  files: string[];
  /** Or: the command whose approval the run waits for (files is then empty). */
  command?: string;
  /** With command: it was approved (or allowed) and runs now; the step ends when it does. */
  running?: boolean;
}

export interface AgentResult {
  id: string;
  text: string;
  steps: AgentStepParams[];
  error?: string;
  stopped?: boolean;
  stepLimit?: boolean;
  trimmed?: string;
}

export interface EditRange {
  start: Position;
  end?: Position;
}

export interface EditParams {
  uri: string;
  instruction: string;
  id?: string;
  range?: EditRange;
}

/** Either `error`, or the edit: minimal `edits` against document `version`. */
export interface EditResult {
  id: string;
  error?: string;
  version?: number;
  newText?: string;
  edits?: TextEdit[];
  steers?: SteerMark[];
  stopped?: boolean;
  madeBy?: string;
}

export interface NextEditParams {
  uri: string;
  position?: Position;
}

export interface NextEditResult {
  uri: string;
  version: number;
  edits: TextEdit[];
}

export type ServerState = "starting" | "ready" | "busy" | "error" | "offline" | "unconfigured";

/** The `kestrel/status` notification and the `kestrel/getStatus` result. */
export interface Status {
  state: ServerState;
  busy: boolean;
  provider: string;
  model: string;
  connection: string;
  ttftMs: number | null;
  tokensPerSec: number | null;
  /** Why it is in error, offline or unconfigured; while ready, which API key the endpoint lacks. */
  message: string | null;
  effortSupported: boolean;
  effortNote: string | null;
}

export interface ContextDefinition {
  path: string;
  name: string;
}

/** What the last completion prompt was given from other files (repository context). */
export interface CompletionContext {
  path: string | null;
  definitions: ContextDefinition[];
  chars: number;
  resolved: number;
  enabled: boolean;
}

export interface DiagnosticsResult {
  tasks: number;
  openFiles: number;
  rssMb: number;
  documents: number;
  pendingRequests: number;
  liveGenerations: number;
  generationsStarted: number;
  /** The endpoint's time to the first token of the last generation started (absent before the first). */
  lastGenerationTtftMs?: number;
  preparedGenerations: number;
  preparedUsed: number;
  readAheads: number;
  readAheadsUsed: number;
}

// -- notifications --------------------------------------------------------------------------
export interface CursorParams {
  uri: string;
  position: Position;
}

export interface SetApiKeyParams {
  apiKey?: string | null;
  provider?: string;
  baseUrl?: string;
}

export interface StreamDelta {
  id: string;
  delta: string;
}

export interface EditStartedParams {
  id: string;
  edits: TextEdit[];
}

export interface ChatResumedParams {
  id: string;
  at: number;
  reason: string;
}

export interface ChatSteeredParams extends SteerMark {
  id: string;
}

export interface ChatSourcesParams {
  id: string;
  sources: SourceRef[];
  searchMs: number;
}

// -- the method table -----------------------------------------------------------------------
/** Requests the client sends: method → params and result. */
export interface KestrelRequests {
  "kestrel/chat": { params: ChatParams; result: ChatResult };
  "kestrel/steer": { params: SteerParams; result: SteerResult };
  "kestrel/stopChat": { params: StopChatParams; result: boolean };
  "kestrel/edit": { params: EditParams; result: EditResult };
  "kestrel/nextEdit": { params: NextEditParams; result: NextEditResult | null };
  "kestrel/getStatus": { params: NoParams; result: Status };
  "kestrel/diagnostics": { params: NoParams; result: DiagnosticsResult };
  "kestrel/completionContext": { params: NoParams; result: CompletionContext };
  "kestrel/agent": { params: AgentParams; result: AgentResult };
}

/** Notifications the client sends: method → params. */
export interface ClientNotifications {
  "kestrel/setApiKey": SetApiKeyParams;
  "kestrel/cursor": CursorParams;
}

/** Notifications the server sends: method → params. */
export interface ServerNotifications {
  "kestrel/status": Status;
  "kestrel/chatDelta": StreamDelta;
  "kestrel/chatSteered": ChatSteeredParams;
  "kestrel/chatResumed": ChatResumedParams;
  "kestrel/editStarted": EditStartedParams;
  "kestrel/editDelta": StreamDelta;
  "kestrel/chatSources": ChatSourcesParams;
  "kestrel/agentStep": AgentStepParams;
  "kestrel/agentReview": AgentReviewParams;
}

/** What sends to and listens to the server: the language client, or a fake in tests. */
export interface KestrelConnection<D> {
  sendRequest<R>(method: string, params: unknown): Promise<R>;
  onNotification(method: string, handler: (params: any) => void): D;
}

/** A `kestrel/*` request with its params and result types checked against the table above. */
export function request<M extends keyof KestrelRequests>(
  client: Pick<KestrelConnection<unknown>, "sendRequest">,
  method: M,
  params: KestrelRequests[M]["params"],
): Promise<KestrelRequests[M]["result"]> {
  return client.sendRequest<KestrelRequests[M]["result"]>(method, params);
}

/** Send a `kestrel/*` notification, its params checked against the table above. */
export function notify<M extends keyof ClientNotifications>(
  client: { sendNotification(method: string, params: unknown): Promise<void> },
  method: M,
  params: ClientNotifications[M],
): Promise<void> {
  return client.sendNotification(method, params);
}

/** Listen to a `kestrel/*` notification, its params typed from the table above. */
export function onNotification<M extends keyof ServerNotifications, D>(
  client: Pick<KestrelConnection<D>, "onNotification">,
  method: M,
  handler: (params: ServerNotifications[M]) => void,
): D {
  return client.onNotification(method, handler);
}
