/** A cancellable wait: the client-side debounce before asking for an inline completion. */

export interface CancelToken {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => unknown): { dispose(): unknown };
}

/** Resolves `true` after `ms`, or `false` as soon as the token is cancelled (a newer keystroke). */
export function debounce(ms: number, token?: CancelToken): Promise<boolean> {
  if (token?.isCancellationRequested) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    let sub: { dispose(): unknown } | undefined;
    const timer = setTimeout(() => {
      sub?.dispose();
      resolve(!token?.isCancellationRequested);
    }, ms);
    sub = token?.onCancellationRequested(() => {
      clearTimeout(timer);
      sub?.dispose();
      resolve(false);
    });
  });
}
