/**
 * HTML of the Connect UI: the page shell (filled by the script) and the callback's result page, in
 * the end user's language and theme (`Look`): the page's own text goes in as JSON for the script.
 */
import { errorMessage, errorTexts, fill, uiText } from '../../connect/ui-text.js';
import type { AccountChoiceView, EmbedSettings, UiLanguage, UiTheme } from '../../connect/wire.js';

/** The language and theme a page is rendered in. */
export interface Look {
  lang: UiLanguage;
  theme: UiTheme;
}

const STYLE = `
:root{color-scheme:light;--fg:#1b1f24;--muted:#5b6470;--line:#d5d9df;--field:#8a929c;--bg:#f5f6f8;--card:#fff;--hover:#f3f5ff;
--accent:var(--brand-light,#3553d1);--on-accent:var(--brand-on-light,#fff);--ok:#1f7a45;--ok-bg:#e5f5ec;--bad:#b42318;--avatar:#e8ecfb}
:root[data-theme=dark]{color-scheme:dark;--fg:#e8eaed;--muted:#a9b1bc;--line:#3a414c;--field:#7d8693;--bg:#14171c;--card:#1f242c;--hover:#262c36;
--accent:var(--brand-dark,#93a6ff);--on-accent:var(--brand-on-dark,#10131a);--ok:#6fd39b;--ok-bg:#1d3a2a;--bad:#ff9b8f;--avatar:#2b3350}
@media (prefers-color-scheme:dark){:root[data-theme=system]{color-scheme:dark;--fg:#e8eaed;--muted:#a9b1bc;--line:#3a414c;--field:#7d8693;
--bg:#14171c;--card:#1f242c;--hover:#262c36;--accent:var(--brand-dark,#93a6ff);--on-accent:var(--brand-on-dark,#10131a);--ok:#6fd39b;
--ok-bg:#1d3a2a;--bad:#ff9b8f;--avatar:#2b3350}}
*{box-sizing:border-box}
body{margin:0;min-height:100vh;display:flex;align-items:flex-start;justify-content:center;background:var(--bg);
font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg)}
main{width:100%;max-width:440px;padding:32px 16px}
.card{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:24px;box-shadow:0 1px 3px rgba(0,0,0,.05)}
h1{font-size:20px;margin:0 0 4px}
header{margin-bottom:18px}
.app{display:flex;align-items:center;gap:10px;margin-bottom:14px;font-weight:600}
.app img{width:28px;height:28px;border-radius:6px;object-fit:contain}
.muted{color:var(--muted);margin:0;font-size:14px}
.loading{display:flex;flex-direction:column;align-items:center;gap:12px;padding:64px 0;color:var(--muted)}
.spinner{width:32px;height:32px;border-radius:50%;border:3px solid var(--line);border-top-color:var(--accent);animation:spin .8s linear infinite}
@keyframes spin{to{transform:rotate(360deg)}}
@media (prefers-reduced-motion:reduce){.spinner{animation-duration:3s}}
ul.integrations{list-style:none;margin:0;padding:0;display:flex;flex-direction:column;gap:8px}
button.integration{width:100%;display:flex;align-items:center;gap:12px;padding:12px;border:1px solid var(--line);border-radius:10px;
background:var(--card);cursor:pointer;text-align:left;font:inherit;color:inherit}
button.integration:hover{border-color:var(--accent);background:var(--hover)}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
img.logo{flex:none;width:36px;height:36px;border-radius:8px;object-fit:contain}
input.search{width:100%;margin-bottom:12px}
.avatar{flex:none;width:36px;height:36px;border-radius:8px;background:var(--avatar);color:var(--accent);display:grid;place-items:center;font-weight:600}
.names{display:flex;flex-direction:column;flex:1}
.chevron{color:var(--muted);font-size:20px}
.field{display:flex;flex-direction:column;gap:4px;margin-bottom:14px}
label{font-weight:600;font-size:14px}
input{font:inherit;color:inherit;background:var(--card);padding:9px 11px;border:1px solid var(--field);border-radius:8px}
input::placeholder{color:var(--muted);opacity:1}
input:focus-visible{outline:3px solid var(--accent);outline-offset:0;border-color:var(--accent)}
.certificate textarea{font:12px/1.4 ui-monospace,monospace;color:inherit;background:var(--card);padding:8px;border:1px solid var(--field);border-radius:8px;resize:vertical}
a.button.secondary{display:inline-block;padding:8px 14px;border:1px solid var(--line);border-radius:8px;color:inherit;text-decoration:none}
input[aria-invalid=true]{border-color:var(--bad)}
.help{color:var(--muted);font-size:13px;margin:0}
a{color:var(--accent)}
.field-error,.form-error{color:var(--bad);font-size:13px;min-height:0;margin:0}
.form-error{margin-bottom:12px}
button.primary{width:100%;padding:10px;border:0;border-radius:8px;background:var(--accent);color:var(--on-accent);font:inherit;font-weight:600;cursor:pointer}
button.primary:disabled{opacity:.6;cursor:default}
button.secondary{padding:8px 14px;border:1px solid var(--line);border-radius:8px;background:var(--card);color:inherit;font:inherit;cursor:pointer}
button.link{border:0;background:none;color:var(--accent);padding:0;margin-bottom:14px;font:inherit;cursor:pointer;text-decoration:underline}
.error h1{color:var(--bad)}
.code{color:var(--muted);font-size:12px;font-family:ui-monospace,monospace}
.success{text-align:center}
.check{width:48px;height:48px;margin:4px auto 12px;border-radius:50%;background:var(--ok-bg);color:var(--ok);display:grid;place-items:center;font-size:26px}
.actions{margin-top:12px}
fieldset.sr-reset{border:0;margin:0;padding:0;min-width:0}
ul.accounts{list-style:none;margin:0 0 14px;padding:0;display:flex;flex-direction:column;gap:8px}
label.account{display:flex;align-items:center;gap:10px;padding:10px 12px;border:1px solid var(--line);border-radius:10px;cursor:pointer;font-weight:400}
label.account:has(input:checked){border-color:var(--accent);background:var(--hover)}
label.account input{margin:0;accent-color:var(--accent)}
.account-url{color:var(--muted);font-size:13px;word-break:break-all}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
button.close-frame{position:fixed;top:10px;right:10px;width:32px;height:32px;border:1px solid var(--line);border-radius:50%;
background:var(--card);color:var(--muted);font:20px/1 system-ui,sans-serif;cursor:pointer}
button.close-frame:hover{color:var(--fg);border-color:var(--accent)}
`;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** `data`: what the script reads after it has replaced the main element's content. */
function layout(look: Look, title: string, body: string, scriptPath: string, data = ''): string {
  return `<!doctype html>
<html lang="${look.lang}" data-theme="${look.theme}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main id="app">${body}</main>${data}${jsonScript('latchkey-look', { ...look, text: uiText(look.lang), errors: errorTexts(look.lang) })}<script type="module" src="${scriptPath}"></script></body></html>`;
}

function loading(text: string): string {
  return `<div class="loading" role="status" aria-busy="true"><div class="spinner" aria-hidden="true"></div><p>${escapeHtml(text)}</p></div>`;
}

function jsonScript(id: string, value: unknown): string {
  return `<script type="application/json" id="${id}">${JSON.stringify(value).replace(/</g, '\\u003c')}</script>`;
}

/** The Connect UI page: a loading indicator until the script has the session token. */
export function connectPage(basePath: string, look: Look): string {
  const t = uiText(look.lang);
  return layout(look, t.chooseTitle, loading(t.loading), `${basePath}/connect/ui.js`);
}

/** What the framed Connect UI needs to know (the wire type the page reads). */
export type { EmbedSettings };

/**
 * The Connect UI page for an iframe: the same page, plus the namespace whose sessions it accepts
 * and the origins it accepts the session token from and sends its events to.
 */
export function embeddedConnectPage(basePath: string, settings: EmbedSettings, look: Look): string {
  const t = uiText(look.lang);
  return layout(look, t.chooseTitle, `${loading(t.loading)}${jsonScript('latchkey-embed', settings)}`, `${basePath}/connect/ui.js`);
}

/** The popup an embedded Connect UI opens on the end user's click, before it sends it to the provider. */
export function redirectPage(basePath: string, look: Look): string {
  const t = uiText(look.lang);
  return layout(look, t.openingSignIn, `${loading(t.openingSignIn)}${jsonScript('latchkey-redirect', {})}`, `${basePath}/connect/ui.js`);
}

/** The callback's page when the grant covers several accounts: the script lists them and sends the end user's choice. */
export function choicePage(basePath: string, look: Look, view: AccountChoiceView): string {
  const t = uiText(look.lang);
  const title = fill(t.chooseAccountTitle, { provider: view.name });
  return layout(look, title, loading(t.loading), `${basePath}/connect/ui.js`, jsonScript('latchkey-choice', view));
}

export type ResultEvent =
  | { type: 'connect'; providerConfigKey: string; connectionId?: string }
  | { type: 'error'; error: { code: string; message: string }; providerConfigKey?: string };

/** The OAuth callback's page: a readable outcome, and the event for the opener (sent by the script). */
export function resultPage(basePath: string, look: Look, event: ResultEvent, name?: string): string {
  const t = uiText(look.lang);
  const json = JSON.stringify({ event }).replace(/</g, '\\u003c');
  const connected = fill(t.connected, { name: name ?? 'Account' });
  const body =
    event.type === 'connect'
      ? `<div class="card success" role="status"><div class="check" aria-hidden="true">✓</div><h1>${escapeHtml(connected)}</h1><p>${escapeHtml(t.canClose)}</p></div>`
      : `<div class="card error" role="alert"><h1>${escapeHtml(t.couldNotConnect)}</h1><p>${escapeHtml(errorMessage(look.lang, event.error.code, event.error.message))}</p><p class="code">${escapeHtml(fill(t.errorCode, { code: event.error.code }))}</p><p class="muted">${escapeHtml(t.closeAndRetry)}</p></div>`;
  return layout(
    look,
    event.type === 'connect' ? connected : t.couldNotConnect,
    `${body}<script type="application/json" id="latchkey-result">${json}</script>`,
    `${basePath}/connect/ui.js`,
  );
}
