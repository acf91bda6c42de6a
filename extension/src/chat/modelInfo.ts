/** The model line and effort picker of the chat header, from the server's `kestrel/status`. */
import type { ModelInfo } from "./protocol";
import type { KestrelStatus } from "../statusView";

/** The status snapshot with the effort fields the server reports (older servers omit them). */
export type StatusWithEffort = KestrelStatus;

export function modelInfo(status: StatusWithEffort | undefined): ModelInfo {
  const info: ModelInfo = { effortSupported: status?.effortSupported ?? true };
  if (status?.provider) info.provider = status.provider;
  if (status?.model) info.model = status.model;
  if (status?.effortNote) info.effortNote = status.effortNote;
  return info;
}

export function sameModelInfo(a: ModelInfo, b: ModelInfo): boolean {
  return a.provider === b.provider && a.model === b.model && a.effortSupported === b.effortSupported && a.effortNote === b.effortNote;
}
