/** HTML of the Connect UI: the page shell (filled by the script) and the callback's result page. */
import type { EmbedSettings } from '../../connect/wire.js';

const STYLE = `
:root{color-scheme:light;--fg:#1b1f24;--muted:#5b6470;--line:#e3e6ea;--accent:#3553d1;--bg:#f5f6f8;--ok:#1f8a4c;--bad:#b42318}
*{box-sizing:border-box}
body{margin:0;min-height:100vh;display:flex;align-items:flex-start;justify-content:center;background:var(--bg);
font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg)}
main{width:100%;max-width:440px;padding:32px 16px}
.card{background:#fff;border:1px solid var(--line);border-radius:12px;padding:24px;box-shadow:0 1px 3px rgba(0,0,0,.05)}
h1{font-size:20px;margin:0 0 4px}
header{margin-bottom:18px}
.muted{color:var(--muted);margin:0;font-size:14px}
.loading{display:flex;flex-direction:column;align-items:center;gap:12px;padding:64px 0;color:var(--muted)}
.spinner{width:32px;height:32px;border-radius:50%;border:3px solid var(--line);border-top-color:var(--accent);animation:spin .8s linear infinite}
@keyframes spin{to{transform:rotate(360deg)}}
ul.integrations{list-style:none;margin:0;padding:0;display:flex;flex-direction:column;gap:8px}
button.integration{width:100%;display:flex;align-items:center;gap:12px;padding:12px;border:1px solid var(--line);border-radius:10px;
background:#fff;cursor:pointer;text-align:left;font:inherit;color:inherit}
button.integration:hover,button.integration:focus-visible{border-color:var(--accent);outline:none;background:#f8f9ff}
button.integration:disabled{cursor:default;opacity:.65;background:#fafafa}
button.integration:disabled:hover{border-color:var(--line)}
.reason{color:var(--bad);font-size:13px}
img.logo{flex:none;width:36px;height:36px;border-radius:8px;object-fit:contain}
input.search{width:100%;margin-bottom:12px}
.avatar{flex:none;width:36px;height:36px;border-radius:8px;background:#e8ecfb;color:var(--accent);display:grid;place-items:center;font-weight:600}
.names{display:flex;flex-direction:column;flex:1}
.chevron{color:var(--muted);font-size:20px}
.field{display:flex;flex-direction:column;gap:4px;margin-bottom:14px}
label{font-weight:600;font-size:14px}
input{font:inherit;padding:9px 11px;border:1px solid #c9ced6;border-radius:8px}
input:focus{outline:2px solid #c7d0f6;border-color:var(--accent)}
input[aria-invalid=true]{border-color:var(--bad)}
.field-error,.form-error{color:var(--bad);font-size:13px;min-height:0;margin:0}
.form-error{margin-bottom:12px}
button.primary{width:100%;padding:10px;border:0;border-radius:8px;background:var(--accent);color:#fff;font:inherit;font-weight:600;cursor:pointer}
button.primary:disabled{opacity:.6;cursor:default}
button.secondary{padding:8px 14px;border:1px solid var(--line);border-radius:8px;background:#fff;font:inherit;cursor:pointer}
button.link{border:0;background:none;color:var(--accent);padding:0;margin-bottom:14px;font:inherit;cursor:pointer}
.error h1{color:var(--bad)}
.code{color:var(--muted);font-size:12px;font-family:ui-monospace,monospace}
.success{text-align:center}
.check{width:48px;height:48px;margin:4px auto 12px;border-radius:50%;background:#e5f5ec;color:var(--ok);display:grid;place-items:center;font-size:26px}
.actions{margin-top:12px}
button.close-frame{position:fixed;top:10px;right:10px;width:32px;height:32px;border:1px solid var(--line);border-radius:50%;
background:#fff;color:var(--muted);font:20px/1 system-ui,sans-serif;cursor:pointer}
button.close-frame:hover,button.close-frame:focus-visible{color:var(--fg);border-color:var(--accent);outline:none}
`;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function layout(title: string, body: string, scriptPath: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main id="app">${body}</main><script type="module" src="${scriptPath}"></script></body></html>`;
}

const LOADING = '<div class="loading" role="status" aria-busy="true"><div class="spinner" aria-hidden="true"></div><p>Loading…</p></div>';

function jsonScript(id: string, value: unknown): string {
  return `<script type="application/json" id="${id}">${JSON.stringify(value).replace(/</g, '\\u003c')}</script>`;
}

/** The Connect UI page: a loading indicator until the script has the session token. */
export function connectPage(basePath: string): string {
  return layout('Connect an account', LOADING, `${basePath}/connect/ui.js`);
}

/** What the framed Connect UI needs to know (the wire type the page reads). */
export type { EmbedSettings };

/**
 * The Connect UI page for an iframe: the same page, plus the namespace whose sessions it accepts
 * and the origins it accepts the session token from and sends its events to.
 */
export function embeddedConnectPage(basePath: string, settings: EmbedSettings): string {
  return layout('Connect an account', `${LOADING}${jsonScript('latchkey-embed', settings)}`, `${basePath}/connect/ui.js`);
}

/** The popup an embedded Connect UI opens on the end user's click, before it sends it to the provider. */
export function redirectPage(basePath: string): string {
  return layout(
    'Connecting…',
    `<div class="loading" role="status" aria-busy="true"><div class="spinner" aria-hidden="true"></div><p>Opening the sign-in page…</p></div>${jsonScript('latchkey-redirect', {})}`,
    `${basePath}/connect/ui.js`,
  );
}

export type ResultEvent =
  | { type: 'connect'; providerConfigKey: string; connectionId?: string }
  | { type: 'error'; error: { code: string; message: string }; providerConfigKey?: string };

/** The OAuth callback's page: a readable outcome, and the event for the opener (sent by the script). */
export function resultPage(basePath: string, event: ResultEvent, name?: string): string {
  const json = JSON.stringify({ event }).replace(/</g, '\\u003c');
  const body =
    event.type === 'connect'
      ? `<div class="card success" role="status"><div class="check" aria-hidden="true">✓</div><h1>${escapeHtml(name ?? 'Account')} is connected</h1><p>You can close this window.</p></div>`
      : `<div class="card error" role="alert"><h1>Could not connect</h1><p>${escapeHtml(event.error.message)}</p><p class="code">Error code: ${escapeHtml(event.error.code)}</p><p class="muted">You can close this window and try again from the application.</p></div>`;
  return layout(
    event.type === 'connect' ? 'Connected' : 'Could not connect',
    `${body}<script type="application/json" id="latchkey-result">${json}</script>`,
    `${basePath}/connect/ui.js`,
  );
}
