/**
 * The chat webview's page: its Content-Security-Policy (here, with the host that serves the page)
 * around the skeleton the webview script fills in (webview/page.ts, next to the script that needs
 * its exact ids). Only the nonce'd script runs: model output can never bring its own.
 */
import { pageHtml } from "./webview/page";

export interface PageUris {
  cspSource: string;
  script: string;
  style: string;
  nonce: string;
}

export function chatPage({ cspSource, script, style, nonce }: PageUris): string {
  const csp = [
    "default-src 'none'",
    `style-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
    `img-src ${cspSource}`,
    `font-src ${cspSource}`,
  ].join("; ");
  return pageHtml({ csp, nonce, scriptUri: script, styleUri: style });
}
