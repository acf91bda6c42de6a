/**
 * The chat webview's page: the static skeleton main.ts fills in. The host (chatView.ts) calls it
 * with the CSP, its nonce and the webview URIs of the script and the stylesheet. No DOM and no
 * `vscode` import here: it runs in the extension host.
 */

export interface PageOptions {
  csp: string;
  nonce: string;
  scriptUri: string;
  styleUri: string;
}

const escapeAttr = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

const EFFORTS = ["low", "medium", "high", "xhigh"];

export function pageHtml(opts: PageOptions): string {
  const csp = escapeAttr(opts.csp);
  const nonce = escapeAttr(opts.nonce);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeAttr(opts.styleUri)}">
<title>Kestrel Chat</title>
</head>
<body>
<header class="header">
  <div class="header-row">
    <button type="button" id="history-toggle" class="icon-button" aria-expanded="false" aria-controls="history-panel" aria-label="Chat history" title="Chat history"><span aria-hidden="true">☰</span></button>
    <h1 id="chat-title" class="chat-title">New chat</h1>
    <button type="button" id="new" class="icon-button" aria-label="New chat" title="New chat (Ctrl+L)"><span aria-hidden="true">+</span></button>
  </div>
  <div class="header-row model-row">
    <span id="model" class="model" title="The model that answers">model not known yet</span>
    <label id="effort-label" class="effort"><span class="effort-name">Effort</span>
      <select id="effort" aria-describedby="effort-note">${EFFORTS.map((e) => `<option value="${e}">${e}</option>`).join("")}</select>
    </label>
    <span id="effort-note" class="visually-hidden"></span>
  </div>
</header>
<nav id="history-panel" class="history-panel" aria-label="Chat history" hidden>
  <input id="history-search" type="search" placeholder="Search chats" aria-label="Search chats by title" autocomplete="off" spellcheck="false">
  <ul id="history-list" class="history-list"></ul>
  <p id="history-none" class="history-none" hidden>No chat matches.</p>
</nav>
<main id="main" class="main">
  <div id="transcript" class="transcript" role="region" aria-label="Conversation" tabindex="0">
    <section id="empty" class="empty" aria-labelledby="empty-title">
      <h2 id="empty-title">Ask Kestrel about your code</h2>
      <p>The chips under the conversation show what your message takes along: the <strong>current file</strong>,
      your <strong>selection</strong>, the <strong>open files</strong> and the <strong>problems</strong>. Click a chip to
      include or leave it out. Type <kbd>#</kbd> (or <kbd>@</kbd>) to mention any <strong>file</strong>, folder or
      <strong>symbol</strong> of the workspace, the <strong>problems</strong>, the <strong>git diff</strong>, the
      <strong>terminal</strong>'s last command or <strong>#codebase</strong>: it is read again when you send.</p>
      <ul class="empty-keys">
        <li><kbd>Enter</kbd> sends, <kbd>Shift</kbd>+<kbd>Enter</kbd> starts a new line.</li>
        <li>While Kestrel answers, <kbd>Enter</kbd> steers the answer and <kbd>Tab</kbd> queues your message for after it.</li>
        <li><kbd>Esc</kbd> stops the answer, <kbd>↑</kbd> in the empty input recalls your last prompts.</li>
        <li><kbd>Ctrl</kbd>+<kbd>Alt</kbd>+<kbd>I</kbd> opens this chat, <kbd>Ctrl</kbd>+<kbd>L</kbd> starts a new one.</li>
        <li>Code blocks in answers have Copy, Insert and Apply (always reviewed first); commands have Run in terminal.</li>
      </ul>
    </section>
  </div>
  <button type="button" id="jump" class="jump" hidden><span aria-hidden="true">↓</span> Jump to latest</button>
  <div id="announcer" class="visually-hidden" aria-live="polite"></div>
</main>
<footer class="composer">
  <div id="queue" class="queue" hidden></div>
  <div id="chips" class="chips" role="group" aria-label="Context sent with your message"></div>
  <ul id="mention-list" class="mention-list" role="listbox" aria-label="Mention a file, a symbol or more" hidden></ul>
  <div class="input-box">
    <div id="mentions" class="mentions" role="group" aria-label="Mentioned in your message" hidden></div>
    <textarea id="input" rows="3" aria-label="Message to Kestrel" aria-describedby="hint" aria-autocomplete="list" aria-controls="mention-list" placeholder="Ask Kestrel about your code"></textarea>
    <div class="input-bar">
      <span id="hint" class="hint">Enter to send · Shift+Enter for a new line</span>
      <button type="button" id="send" class="primary" title="Send (Enter)">Send</button>
      <button type="button" id="stop" class="primary" title="Stop the answer (Esc)" hidden>Stop</button>
    </div>
  </div>
</footer>
<script nonce="${nonce}" src="${escapeAttr(opts.scriptUri)}"></script>
</body>
</html>`;
}
