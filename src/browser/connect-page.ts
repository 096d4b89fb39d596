/**
 * The Connect UI's script (runs in the end user's browser; no framework). It waits for the session
 * token (from `?session_token=` or from the frontend client by postMessage), lists the session's
 * integrations or goes straight to the only one, runs the OAuth redirect or the form, and reports
 * `connect` / `error` events to the window that opened it. On the callback page it only reports.
 *
 * Embedded (the `/connect/embed` page in the application's iframe) it takes the token only from the
 * parent window, and only from an origin of the Environment's `connectUI.allowedOrigins`; it sends
 * its events to that origin alone. An OAuth provider's pages refuse to be framed, so the provider
 * step runs in a popup the frame opens from the end user's click; the callback page in that popup
 * reports back to the frame (Latchkey's own origin), which reports to the application and closes it.
 *
 * On `/connect/` (framed by Nango's frontend SDK, `openConnectUI`) the same frame speaks that SDK's
 * protocol: `{type:'ready'}`, then `{type:'session_token', sessionToken}` from the parent, and events
 * in Nango's shapes (`connect` with `payload`, `error` with `payload`, `close`). Any origin may frame
 * that page, so it shows nothing clickable until the server has accepted the token for the origin
 * that sent it (and the frames above, where the browser tells): otherwise it reports an `error` to
 * that origin and stays blank.
 */

import type {
  AccountChoiceView,
  ApiErrorBody,
  Branding,
  CertificateToRegister,
  EmbedSettings,
  FormField,
  IntegrationView,
  NangoUiMessage,
  SessionView,
  UiEvent,
  UiLanguage,
  UiText,
  UiTheme,
} from '../connect/wire.js';

const SOURCE = 'latchkey-connect';
const CLIENT_SOURCE = 'latchkey-client';
const ORIGIN_KEY = 'latchkey.openerOrigin';
const CLOSE_AFTER_SUCCESS_MS = 1500;
const app = document.getElementById('app')!;
const apiUrl = (path: string) => new URL(`api/${path}`, import.meta.url).href;
/** `?lang=…&theme=…` of this page, for the calls whose answer sets the look the OAuth callback's page keeps. */
const lookQuery = () => `?${new URLSearchParams({ lang: look.lang, theme: look.theme })}`;
let token = '';
let integrations: IntegrationView[] = [];

function jsonData<T>(id: string): T | undefined {
  const node = document.getElementById(id);
  return node ? (JSON.parse(node.textContent ?? 'null') as T) : undefined;
}

/** sessionStorage may be unavailable (a blocked third-party frame): the UI then works without it. */
function stored(key: string): string | null {
  try {
    return sessionStorage.getItem(key);
  } catch {
    return null;
  }
}

/** The page's language, theme and own text, chosen by the server (the SDK's `lang`, Accept-Language). */
const look = jsonData<{ lang: UiLanguage; theme: UiTheme; text: UiText; errors: Record<string, string> }>('latchkey-look')!;

/** The page's text for `key`, its `{placeholders}` filled. */
function tr(key: keyof UiText, values: Record<string, string> = {}): string {
  return look.text[key].replace(/\{(\w+)\}/g, (all, k: string) => values[k] ?? all);
}

let branding: Branding | undefined;

/** Set on the embeddable page only. */
const embed = jsonData<EmbedSettings>('latchkey-embed');
/**
 * The origin that gave us the session token (popup: the application, kept across the provider
 * redirect in sessionStorage; frame: the parent, one of the allowed origins, kept in memory).
 */
let peerOrigin: string | null = embed ? null : stored(ORIGIN_KEY);

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: Array<Node | string>
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c);
  return node;
}

function show(...nodes: Node[]): void {
  app.replaceChildren(...nodes);
  app.removeAttribute('aria-busy');
}

function loading(text: string): void {
  show(el('div', { class: 'loading', role: 'status' }, el('div', { class: 'spinner', 'aria-hidden': 'true' }), el('p', {}, text)));
  app.setAttribute('aria-busy', 'true');
}

/**
 * Reports an event to the window that opened this one (popup) or embeds it (frame), addressed to
 * the origin that gave us the token. A callback page in a popup that an embedded Connect UI opened
 * has no such origin: it reports to Latchkey's own origin (the frame). Never to any origin ('*').
 */
function notify(event: UiEvent): void {
  const target = (window.opener ?? (window.parent !== window ? window.parent : null)) as Window | null;
  if (!target) return;
  const origins = new Set<string>();
  if (peerOrigin) origins.add(peerOrigin);
  if (!embed) origins.add(window.location.origin);
  const message = embed?.protocol === 'nango' ? nangoMessage(event) : { source: SOURCE, ...event };
  for (const origin of origins) target.postMessage(message, origin);
}

/** An event in the shape Nango's frontend SDK hands to `onEvent`. */
function nangoMessage(event: UiEvent): NangoUiMessage {
  if (event.type === 'connect')
    return {
      type: 'connect',
      payload: { providerConfigKey: event.providerConfigKey, ...(event.connectionId ? { connectionId: event.connectionId } : {}) },
    };
  if (event.type === 'error') return { type: 'error', payload: { errorType: event.error.code, errorMessage: event.error.message } };
  return { type: 'close' };
}

function showError(code: string, serverMessage: string, providerConfigKey?: string, retry?: () => void): void {
  notify({ type: 'error', error: { code, message: serverMessage }, ...(providerConfigKey ? { providerConfigKey } : {}) });
  // The end user reads it in the page's language where we have it; the application gets the server's message.
  const message = Object.hasOwn(look.errors, code) ? look.errors[code]! : serverMessage;
  const actions = el('div', { class: 'actions' });
  if (retry) {
    const again = el('button', { type: 'button', class: 'secondary' }, tr('tryAgain'));
    again.addEventListener('click', retry);
    actions.append(again);
  }
  show(
    el(
      'div',
      { class: 'card error', role: 'alert' },
      el('h1', {}, tr('couldNotConnect')),
      el('p', {}, message),
      el('p', { class: 'code' }, tr('errorCode', { code })),
      actions,
    ),
  );
  (actions.querySelector('button') as HTMLButtonElement | null)?.focus();
}

function showSuccess(name: string, providerConfigKey: string, connectionId?: string): void {
  notify({ type: 'connect', providerConfigKey, ...(connectionId ? { connectionId } : {}) });
  show(
    el(
      'div',
      { class: 'card success', role: 'status' },
      el('div', { class: 'check', 'aria-hidden': 'true' }, '✓'),
      el('h1', {}, tr('connected', { name })),
      el('p', {}, embed ? tr('done') : tr('canClose')),
    ),
  );
  // Like the popup closing itself: the frame asks the application's client to remove it.
  if (embed) setTimeout(() => notify({ type: 'close' }), CLOSE_AFTER_SUCCESS_MS);
  else if (window.opener) setTimeout(() => window.close(), CLOSE_AFTER_SUCCESS_MS);
}

async function call<T>(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<{ ok: true; data: T } | { ok: false; status: number; error: NonNullable<ApiErrorBody['error']> }> {
  let res: Response;
  try {
    res = await fetch(apiUrl(path), {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch {
    return {
      ok: false,
      status: 0,
      error: { code: 'network_error', message: tr('networkError') },
    };
  }
  const json = (await res.json().catch(() => ({}))) as { data?: T } & ApiErrorBody;
  if (res.ok && json.data !== undefined) return { ok: true, data: json.data };
  return {
    ok: false,
    status: res.status,
    error: { code: json.error?.code ?? 'unexpected', message: json.error?.message ?? tr('somethingWrong'), errors: json.error?.errors },
  };
}

/** A view's header: the application (when the Environment names it), the title and a line under it. */
function header(title: string, subtitle?: string): HTMLElement {
  const app: Node[] = [];
  if (branding?.appName || branding?.appLogoUrl) {
    const logo =
      branding.appLogoUrl && /^https?:\/\//.test(branding.appLogoUrl)
        ? [el('img', { src: branding.appLogoUrl, alt: '', referrerpolicy: 'no-referrer', width: '28', height: '28' })]
        : [];
    app.push(el('div', { class: 'app' }, ...logo, ...(branding.appName ? [el('span', {}, branding.appName)] : [])));
  }
  // Focusable by script only: each new view moves the focus to its title, so a screen reader reads it.
  return el('header', {}, ...app, el('h1', { tabindex: '-1' }, title), ...(subtitle ? [el('p', { class: 'muted' }, subtitle)] : []));
}

function backButton(): Node[] {
  if (integrations.length < 2) return [];
  const b = el('button', { type: 'button', class: 'link' }, el('span', { 'aria-hidden': 'true' }, '← '), tr('back'));
  b.addEventListener('click', () => {
    renderList();
    app.querySelector<HTMLElement>('h1')?.focus();
  });
  return [b];
}

/** The Environment's brand colour (already made readable by the server) for buttons and links. */
function applyBranding(b: Branding | undefined): void {
  branding = b;
  const root = document.documentElement.style;
  if (!b?.accent) return;
  root.setProperty('--brand-light', b.accent.light);
  root.setProperty('--brand-on-light', b.accent.onLight);
  root.setProperty('--brand-dark', b.accent.dark);
  root.setProperty('--brand-on-dark', b.accent.onDark);
}

/** The row's second line: the Provider's category, else how the end user connects. */
function subtitleOf(i: IntegrationView): string {
  return i.category ?? (i.flow === 'oauth' ? tr('signIn', { provider: i.providerDisplayName }) : tr('credentials'));
}

/** More integrations than this get a search field above the list. */
const SEARCH_ABOVE = 8;

/** The Provider's logo, or its initial when it has none (or the image does not load). */
function avatar(i: IntegrationView): HTMLElement {
  const initial = el('span', { class: 'avatar', 'aria-hidden': 'true' }, i.providerDisplayName.slice(0, 1).toUpperCase());
  if (!i.logoUrl || !/^https?:\/\//.test(i.logoUrl)) return initial;
  const img = el('img', { class: 'logo', src: i.logoUrl, alt: '', referrerpolicy: 'no-referrer', width: '36', height: '36' });
  img.addEventListener('error', () => img.replaceWith(initial));
  return img;
}

function renderList(): void {
  const list = el('ul', { class: 'integrations' });
  const items: Array<{ i: IntegrationView; li: HTMLLIElement }> = [];
  // Integrations that cannot work are not in the session's answer: the operator sees them instead.
  for (const i of integrations) {
    const button = el(
      'button',
      { type: 'button', class: 'integration', 'data-integration': i.id },
      avatar(i),
      el('span', { class: 'names' }, el('strong', {}, i.name), el('span', { class: 'muted' }, subtitleOf(i))),
      el('span', { class: 'chevron', 'aria-hidden': 'true' }, '›'),
    );
    button.addEventListener('click', () => void pick(i, true));
    const li = el('li', {}, button);
    items.push({ i, li });
    list.append(li);
  }
  const nodes: Node[] = [
    header(tr('chooseTitle'), branding?.appName ? tr('chooseSubtitleApp', { app: branding.appName }) : tr('chooseSubtitle')),
  ];
  if (integrations.length > SEARCH_ABOVE) {
    const search = el('input', { type: 'search', class: 'search', placeholder: tr('search'), 'aria-label': tr('searchLabel') });
    // Announced as the list narrows (a screen reader does not see rows disappear).
    const none = el('p', { class: 'muted', role: 'status' });
    search.addEventListener('input', () => {
      const q = search.value.trim().toLowerCase();
      let shown = 0;
      for (const { i, li } of items) {
        const match = !q || `${i.name} ${i.providerDisplayName} ${i.category ?? ''}`.toLowerCase().includes(q);
        li.hidden = !match;
        if (match) shown++;
      }
      none.textContent = shown > 0 ? '' : tr('noMatch');
    });
    nodes.push(search, list, none);
  } else nodes.push(list);
  show(el('div', { class: 'card' }, ...nodes));
}

function renderForm(
  i: IntegrationView,
  fields: FormField[],
  submitLabel: string,
  onSubmit: (values: Record<string, string>, config: Record<string, string>) => Promise<void>,
): void {
  const form = el('form', { novalidate: '' });
  const errorBox = el('p', { class: 'form-error', role: 'alert', hidden: '' });
  const all = [...fields.map((f) => ({ ...f, group: 'values' })), ...i.configFields.map((f) => ({ ...f, group: 'config' }))];
  for (const f of all) {
    const id = `f-${f.group}-${f.name}`;
    const input = el('input', {
      id,
      name: f.name,
      'data-group': f.group,
      type: f.secret ? 'password' : 'text',
      autocomplete: 'off',
      spellcheck: 'false',
      // The help and the field's error are read with the field.
      'aria-describedby': `${id}-help ${id}-error`,
      ...(f.example ? { placeholder: tr('example', { example: f.example }) } : {}),
    });
    if (f.required) input.required = true;
    form.append(el('div', { class: 'field' }, el('label', { for: id }, f.label), input, ...fieldHelp(f, id)));
  }
  const submit = el('button', { type: 'submit', class: 'primary' }, submitLabel);
  form.append(errorBox, submit);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const values: Record<string, string> = {};
    const config: Record<string, string> = {};
    let missing = false;
    for (const input of form.querySelectorAll('input')) {
      const field = form.querySelector<HTMLElement>(`#${input.id}-error`)!;
      field.textContent = '';
      input.removeAttribute('aria-invalid');
      if (input.required && !input.value.trim()) {
        field.textContent = tr('required');
        input.setAttribute('aria-invalid', 'true');
        missing = true;
      }
      (input.dataset.group === 'config' ? config : values)[input.name] = input.value;
    }
    if (missing) {
      form.querySelector<HTMLInputElement>('input[aria-invalid=true]')?.focus();
      return;
    }
    submit.disabled = true;
    submit.textContent = tr('connecting');
    errorBox.hidden = true;
    onSubmit(values, config).catch((err: unknown) => {
      const e2 = err as { message?: string; errors?: Array<{ path?: string; message: string }> };
      for (const fe of e2.errors ?? []) {
        const [group, name] = (fe.path ?? '').split('.');
        const id = `f-${group === 'connectionConfig' ? 'config' : 'values'}-${name}`;
        const target = form.querySelector<HTMLElement>(`#${id}-error`);
        if (target) {
          target.textContent = fe.message;
          form.querySelector(`#${id}`)?.setAttribute('aria-invalid', 'true');
        }
      }
      // role=alert: announced as it appears.
      errorBox.textContent = e2.message ?? tr('somethingWrong');
      errorBox.hidden = false;
      submit.disabled = false;
      submit.textContent = submitLabel;
    });
  });
  const certificate = i.certificate ? [certificateBlock(i, i.certificate)] : [];
  show(el('div', { class: 'card' }, ...backButton(), header(tr('connectTitle', { name: i.name }), accessLine(i)), ...certificate, form));
  form.querySelector('input')?.focus();
}

/**
 * The public certificate the end user's administrator registers with the provider (SAML bearer Providers), read-only,
 * to copy or download; outside the form, so it is never submitted.
 */
function certificateBlock(i: IntegrationView, cert: CertificateToRegister): HTMLElement {
  const id = 'certificate';
  const text = el('textarea', { id, readonly: '', rows: '6', spellcheck: 'false', 'aria-describedby': `${id}-help` });
  text.value = cert.pem;
  const status = el('span', { class: 'muted', role: 'status' });
  const copy = el('button', { type: 'button', class: 'secondary', id: `${id}-copy` }, tr('copy'));
  copy.addEventListener('click', () => {
    text.select();
    const done = () => (status.textContent = tr('copied'));
    if (navigator.clipboard) navigator.clipboard.writeText(cert.pem).then(done, () => document.execCommand('copy') && done());
    else if (document.execCommand('copy')) done();
  });
  const download = el(
    'a',
    {
      class: 'button secondary',
      id: `${id}-download`,
      download: cert.fileName,
      href: URL.createObjectURL(new Blob([cert.pem], { type: 'application/x-pem-file' })),
    },
    tr('download'),
  );
  const help = el('p', { class: 'help', id: `${id}-help` }, tr('certificateLead', { provider: i.providerDisplayName }));
  if (cert.description) help.append(' ', cert.description);
  if (cert.docsUrl && /^https:\/\//.test(cert.docsUrl))
    help.append(
      ' ',
      el(
        'a',
        { href: cert.docsUrl, target: '_blank', rel: 'noopener noreferrer', class: 'docs' },
        tr('howToFind'),
        el('span', { class: 'sr-only' }, ` ${tr('opensNewTab')}`),
      ),
    );
  return el(
    'div',
    { class: 'field certificate' },
    el('label', { for: id }, tr('certificateTitle')),
    help,
    text,
    el('p', {}, copy, ' ', download, ' ', status),
  );
}

/**
 * The callback's choice page: the accounts one grant covers (names and URLs as the provider gives
 * them), a reconnect's current one selected; the choice goes to the server, which holds the tokens.
 * A refused choice (not listed, or a reconnect's other account) leaves the list for another choice.
 */
function renderChoice(view: AccountChoiceView): void {
  const form = el('form', { novalidate: '' });
  const title = tr('chooseAccountTitle', { provider: view.name });
  const errorBox = el('p', { class: 'form-error', role: 'alert', hidden: '' });
  const list = el('ul', { class: 'accounts' });
  view.accounts.forEach((a, i) => {
    const id = `account-${i}`;
    const input = el('input', { type: 'radio', name: 'account', value: a.value, id });
    if (a.value === view.selected) input.checked = true;
    const current = a.value === view.selected ? [' ', el('span', { class: 'muted' }, tr('currentAccount'))] : [];
    const url = a.url ? [el('span', { class: 'account-url' }, a.url)] : [];
    list.append(
      el(
        'li',
        {},
        el('label', { class: 'account', for: id }, input, el('span', { class: 'names' }, el('span', {}, a.label, ...current), ...url)),
      ),
    );
  });
  const submit = el('button', { type: 'submit', class: 'primary' }, tr('continue'));
  form.append(el('fieldset', { class: 'sr-reset' }, el('legend', { class: 'sr-only' }, title), list), errorBox, submit);
  const fail = (message: string) => {
    errorBox.textContent = message;
    errorBox.hidden = false;
    submit.disabled = false;
    submit.textContent = tr('continue');
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const chosen = form.querySelector<HTMLInputElement>('input[name=account]:checked');
    if (!chosen) {
      fail(look.errors.invalid_account_choice ?? 'Choose one of the accounts listed.');
      return;
    }
    submit.disabled = true;
    submit.textContent = tr('connecting');
    errorBox.hidden = true;
    void sendChoice(view, chosen.value, fail);
  });
  show(el('div', { class: 'card' }, header(title, tr('chooseAccountHelp', { provider: view.name })), form));
  (form.querySelector<HTMLInputElement>('input:checked') ?? form.querySelector('input'))?.focus();
}

async function sendChoice(view: AccountChoiceView, account: string, fail: (message: string) => void): Promise<void> {
  let res: Response;
  try {
    res = await fetch(apiUrl('oauth/choose'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ choice: view.choice, account }),
    });
  } catch {
    fail(tr('networkError'));
    return;
  }
  const json = (await res.json().catch(() => ({}))) as {
    data?: { choice?: AccountChoiceView; providerConfigKey?: string; connectionId?: string; name?: string };
  } & ApiErrorBody;
  if (res.ok && json.data?.choice) {
    renderChoice(json.data.choice);
    return;
  }
  if (res.ok && json.data?.providerConfigKey) {
    showSuccess(json.data.name ?? view.name, json.data.providerConfigKey, json.data.connectionId);
    return;
  }
  const code = json.error?.code ?? 'unexpected';
  const message = json.error?.message ?? tr('somethingWrong');
  // The choice is still open: the end user may choose another account.
  if (code === 'invalid_account_choice' || code === 'different_account') {
    fail(Object.hasOwn(look.errors, code) ? look.errors[code]! : message);
    return;
  }
  showError(code, message, view.providerConfigKey);
}

/** "Acme wants access to your Salesforce account." when the Environment names the application. */
function accessLine(i: IntegrationView): string | undefined {
  if (branding?.appName) return tr('wantsAccess', { app: branding.appName, provider: i.providerDisplayName });
  return i.name === i.providerDisplayName ? undefined : i.providerDisplayName;
}

/** Under a field: the Provider's description and its "how to find it" link, then the field's error. */
function fieldHelp(f: FormField, id: string): Node[] {
  const help = el('p', { class: 'help', id: `${id}-help` });
  if (f.description) help.append(f.description, ' ');
  if (f.docsUrl && /^https:\/\//.test(f.docsUrl))
    help.append(
      el(
        'a',
        { href: f.docsUrl, target: '_blank', rel: 'noopener noreferrer', class: 'docs' },
        tr('howToFind'),
        el('span', { class: 'sr-only' }, ` ${tr('opensNewTab')}`),
      ),
    );
  // Empty error lines stay in the page (aria-describedby points at them) but take no room.
  return [...(help.childNodes.length ? [help] : []), el('small', { class: 'field-error', id: `${id}-error` })];
}

async function startOAuth(i: IntegrationView, config: Record<string, string>): Promise<void> {
  // Embedded: open the provider's popup now, while the end user's click still counts (popup blockers).
  const popup = embed ? openSignInWindow() : null;
  if (embed && !popup) {
    showError('popup_blocked', tr('popupBlocked'), i.id, () => void pick(i, true));
    return;
  }
  const previous = [...app.childNodes];
  loading(embed ? tr('opening', { provider: i.providerDisplayName }) : tr('redirecting', { provider: i.providerDisplayName }));
  const r = await call<{ url: string; binding: string }>('POST', `oauth/start${lookQuery()}`, {
    integration: i.id,
    connectionConfig: config,
  });
  if (!r.ok) {
    popup?.close();
    if (r.status === 400 && r.error.errors && i.configFields.length) {
      show(...previous); // back to the form, which shows the field errors
      throw r.error;
    }
    showError(r.error.code ?? 'unexpected', r.error.message ?? tr('somethingWrong'), i.id, () => void pick(i, true));
    return;
  }
  // Top level, the answer has set the browser-binding cookie; a frame's cookie would be third-party,
  // so the popup sets it in its own first-party context before it goes to the provider.
  if (popup) awaitSignIn(i, popup, { token, binding: r.data.binding, url: r.data.url });
  else window.location.assign(r.data.url);
}

/** Centred on the application's window; first shows Latchkey's "opening…" page. */
function openSignInWindow(): Window | null {
  const width = 520;
  const height = 700;
  const left = Math.max(0, Math.round(window.screenX + (window.outerWidth - width) / 2));
  const top = Math.max(0, Math.round(window.screenY + (window.outerHeight - height) / 2));
  const url = new URL('redirect', import.meta.url);
  url.search = new URLSearchParams({ lang: look.lang, theme: look.theme }).toString();
  return window.open(url.href, 'latchkey-sign-in', `popup,width=${width},height=${height},left=${left},top=${top}`);
}

/** What the sign-in popup needs to bind this browser to the flow and go to the provider. */
interface SignInHandoff {
  token: string;
  binding: string;
  url: string;
}

let signIn: { popup: Window; done: boolean; poll: number; handoff: SignInHandoff } | undefined;

function endSignIn(): void {
  if (!signIn) return;
  signIn.done = true;
  clearInterval(signIn.poll);
  if (!signIn.popup.closed) signIn.popup.close();
  signIn = undefined;
}

/**
 * Sends the popup to the provider and waits for the callback page in it to report (to our own
 * origin, from that popup only). A popup closed before that shows a "try again".
 */
function awaitSignIn(i: IntegrationView, popup: Window, handoff: SignInHandoff): void {
  endSignIn();
  const current = { popup, done: false, poll: 0, handoff };
  current.poll = window.setInterval(() => {
    if (current.done || !popup.closed) return;
    endSignIn();
    const again = el('button', { type: 'button', class: 'primary' }, tr('tryAgain'));
    again.addEventListener('click', () => void pick(i, true));
    show(
      el(
        'div',
        { class: 'card', role: 'status' },
        ...backButton(),
        header(tr('connectTitle', { name: i.name })),
        el('p', { class: 'muted' }, tr('windowClosed', { provider: i.providerDisplayName })),
        el('div', { class: 'actions' }, again),
      ),
    );
  }, 400);
  signIn = current;
  // The popup may have loaded before this (then it already asked) or not (then it asks when it has).
  handOff(current);
  const focus = el('button', { type: 'button', class: 'secondary' }, tr('showWindow'));
  focus.addEventListener('click', () => popup.focus());
  const cancel = el('button', { type: 'button', class: 'link' }, tr('cancel'));
  cancel.addEventListener('click', () => {
    endSignIn();
    if (integrations.length > 1) renderList();
    else renderOAuthStart(i);
  });
  show(
    el(
      'div',
      { class: 'card', 'data-state': 'waiting' },
      header(tr('connectTitle', { name: i.name })),
      el(
        'div',
        { class: 'loading', role: 'status' },
        el('div', { class: 'spinner', 'aria-hidden': 'true' }),
        el('p', {}, tr('finishSignIn', { provider: i.providerDisplayName })),
      ),
      el('div', { class: 'actions' }, focus, ' ', cancel),
    ),
  );
  app.setAttribute('aria-busy', 'true');
}

/** Sends the handoff to the popup, addressed to Latchkey's own origin only. */
function handOff(current: NonNullable<typeof signIn>): void {
  try {
    current.popup.postMessage({ source: SOURCE, type: 'sign-in', ...current.handoff }, window.location.origin);
  } catch {
    // Closed meanwhile: the poll shows "try again".
  }
}

function onSignInResult(event: MessageEvent): void {
  if (!signIn || event.source !== signIn.popup || event.origin !== window.location.origin) return;
  const data = event.data as ({ source?: string } & (Partial<UiEvent> | { type: 'sign-in-ready' })) | null;
  if (data?.source !== SOURCE) return;
  if (data.type === 'sign-in-ready') {
    handOff(signIn);
    return;
  }
  if (data.type === 'connect' && typeof data.providerConfigKey === 'string') {
    endSignIn();
    const i = integrations.find((x) => x.id === data.providerConfigKey);
    showSuccess(
      i?.name ?? data.providerConfigKey,
      data.providerConfigKey,
      typeof data.connectionId === 'string' ? data.connectionId : undefined,
    );
  } else if (data.type === 'error') {
    endSignIn();
    const i = integrations.find((x) => x.id === data.providerConfigKey);
    showError(
      String(data.error?.code ?? 'unexpected'),
      String(data.error?.message ?? tr('somethingWrong')),
      i?.id,
      i ? () => void pick(i, true) : undefined,
    );
  }
}

/** Embedded, without a click to open the popup from (a single-integration session): ask for one. */
function renderOAuthStart(i: IntegrationView): void {
  const go = el('button', { type: 'button', class: 'primary' }, tr('continueWith', { provider: i.providerDisplayName }));
  go.addEventListener('click', () => void startOAuth(i, {}));
  show(
    el(
      'div',
      { class: 'card' },
      ...backButton(),
      header(tr('connectTitle', { name: i.name }), accessLine(i)),
      el('p', { class: 'muted' }, tr('windowOpens', { provider: i.providerDisplayName })),
      go,
    ),
  );
}

/** `byClick`: called from the end user's click (an embedded UI may open a popup then). */
async function pick(i: IntegrationView, byClick = false): Promise<void> {
  if (i.flow === 'oauth') {
    if (i.configFields.length) renderForm(i, [], tr('continue'), (_v, config) => startOAuth(i, config));
    else if (embed && !byClick) renderOAuthStart(i);
    else await startOAuth(i, {});
    return;
  }
  renderForm(i, i.fields, tr('connect'), async (values, config) => {
    const r = await call<{ providerConfigKey: string; connectionId?: string }>('POST', 'forms', {
      integration: i.id,
      values,
      connectionConfig: config,
    });
    if (!r.ok) {
      if (r.status === 400) throw r.error;
      showError(r.error.code ?? 'unexpected', r.error.message ?? tr('somethingWrong'), i.id, () => void pick(i, true));
      return;
    }
    showSuccess(i.name, r.data.providerConfigKey, r.data.connectionId);
  });
}

async function begin(sessionToken: string): Promise<void> {
  token = sessionToken;
  const r = await call<SessionView>('GET', `session${lookQuery()}`);
  if (!r.ok) {
    showError(r.error.code ?? 'unexpected', r.error.message ?? tr('somethingWrong'));
    return;
  }
  await showSession(r.data);
}

async function showSession(view: SessionView): Promise<void> {
  applyBranding(view.branding);
  integrations = view.integrations;
  if (integrations.length === 0 && view.unavailableCount) {
    // Every integration offered cannot work yet: the operator's to fix, said plainly to the end user.
    notify({ type: 'error', error: { code: 'integrations_not_ready', message: tr('notReady') } });
    show(el('div', { class: 'card', role: 'alert' }, header(tr('notReadyTitle')), el('p', {}, tr('notReady'))));
    return;
  }
  if (integrations.length === 0) {
    showError('no_integrations', tr('nothingToConnect'));
    return;
  }
  if (integrations.length === 1) await pick(integrations[0]!);
  else renderList();
}

/** The namespace a session token names (its second, base64url part); compared, never trusted. */
function tokenNamespace(t: string): string | undefined {
  const part = t.split('.')[1];
  if (!part) return undefined;
  try {
    return atob(part.replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    return undefined;
  }
}

function addCloseButton(): void {
  const close = el('button', { type: 'button', class: 'close-frame', 'aria-label': tr('close') }, '×');
  close.addEventListener('click', () => {
    endSignIn();
    notify({ type: 'close' });
  });
  document.body.append(close);
}

/** The framed page: the token from the parent (an allowed origin) only, a close button, sign-in popups. */
function mainEmbedded(settings: EmbedSettings): void {
  if (settings.protocol === 'nango') {
    mainNango(settings);
    return;
  }
  addCloseButton();
  if (window.parent === window) {
    showError('not_embedded', 'This page is shown inside the application. Open it from there.');
    return;
  }
  window.addEventListener('message', (event: MessageEvent) => {
    if (event.source !== window.parent) {
      onSignInResult(event);
      return;
    }
    const received = tokenIn(event.data, false);
    if (!settings.allowedOrigins.includes(event.origin) || received === undefined || token) return;
    peerOrigin = event.origin;
    if (tokenNamespace(received) !== settings.namespace) {
      showError('invalid_session', 'The connect session is not valid here. Ask the application for a new one.');
      return;
    }
    void begin(received);
  });
  // Only a parent on an allowed origin receives this (postMessage drops the others).
  for (const origin of settings.allowedOrigins) window.parent.postMessage({ source: SOURCE, type: 'ready' }, origin);
}

/**
 * The page of Nango's `openConnectUI`: framed by its application (or, opened as a window, by its
 * opener). Any origin may frame it, so until the server has accepted the session token for the
 * origin that sent it, the page shows nothing clickable and takes no other input; refused, it tells
 * that origin in Nango's error shape and stays blank.
 */
function mainNango(settings: EmbedSettings): void {
  const framed = window.parent !== window;
  const peer = (framed ? window.parent : window.opener) as Window | null;
  if (!peer) {
    showError('not_embedded', 'This page is shown inside the application. Open it from there.');
    return;
  }
  // A token in the page's address (it narrowed the frame-ancestors) stays out of the frame's history.
  // The token itself still comes from the parent, as the SDK sends it.
  const params = new URLSearchParams(window.location.search);
  if (params.has('session_token')) {
    params.delete('session_token');
    const query = params.toString();
    history.replaceState(null, '', `${window.location.pathname}${query ? `?${query}` : ''}`);
  }
  let settled = false;
  window.addEventListener('message', (event: MessageEvent) => {
    if (event.source !== peer) {
      onSignInResult(event);
      return;
    }
    const received = tokenIn(event.data, true);
    if (received === undefined || settled) return;
    // One token is checked, once: a refused page stays blank whatever else it is sent.
    settled = true;
    const refuse = (code: string, message: string) => {
      token = '';
      show();
      peer.postMessage(nangoMessage({ type: 'error', error: { code, message } }), event.origin);
    };
    if (settings.allowedOrigins.length && !settings.allowedOrigins.includes(event.origin)) {
      refuse('origin_not_allowed', "This application's origin may not show this Connect UI.");
      return;
    }
    if (settings.namespace && tokenNamespace(received) !== settings.namespace) {
      refuse('invalid_session', 'The connect session is not valid here. Ask the application for a new one.');
      return;
    }
    void acceptFrom(received, event.origin, embeddersOf(event.origin, framed), refuse);
  });
  // Nango's UI says ready to any parent: the message carries nothing.
  const ready = { type: 'ready' };
  if (settings.allowedOrigins.length) for (const origin of settings.allowedOrigins) peer.postMessage(ready, origin);
  else peer.postMessage(ready, '*');
}

/**
 * The origins the server checks: the one that sent the token (`event.origin`, which no page can
 * forge) and, framed, the frames above its parent where the browser lists them (Chromium, Safari).
 */
function embeddersOf(origin: string, framed: boolean): string[] {
  const ancestors = framed ? Array.from(window.location.ancestorOrigins ?? []) : [];
  return [origin, ...ancestors.slice(1)];
}

/** Asks for the session with the origins it is shown for; only an accepted answer shows anything. */
async function acceptFrom(
  sessionToken: string,
  origin: string,
  embedders: string[],
  refuse: (code: string, message: string) => void,
): Promise<void> {
  token = sessionToken;
  const query = new URLSearchParams({ lang: look.lang, theme: look.theme });
  for (const e of embedders) query.append('embedder', e);
  const r = await call<SessionView>('GET', `session?${query}`);
  if (!r.ok) {
    refuse(r.error.code ?? 'unexpected', r.error.message ?? tr('somethingWrong'));
    return;
  }
  peerOrigin = origin;
  addCloseButton();
  await showSession(r.data);
}

/** The session token in a parent's message: Latchkey's client's `session`, or Nango's `session_token`. */
function tokenIn(data: unknown, nango: boolean): string | undefined {
  const d = data as { source?: string; type?: string; token?: unknown; sessionToken?: unknown } | null;
  if (nango) return d?.type === 'session_token' && typeof d.sessionToken === 'string' ? d.sessionToken : undefined;
  return d?.source === CLIENT_SOURCE && d.type === 'session' && typeof d.token === 'string' ? d.token : undefined;
}

/**
 * The sign-in popup of an embedded Connect UI: it takes the handoff only from its opener on
 * Latchkey's own origin (the frame), sets the browser-binding cookie here, at top level, where the
 * provider's redirect back will carry it, and then goes to the provider.
 */
function mainSignInPopup(): void {
  const opener = window.opener as Window | null;
  if (!opener) {
    showError('missing_session', 'This page needs a connect session. Open it from the application.');
    return;
  }
  let started = false;
  window.addEventListener('message', (event: MessageEvent) => {
    const data = event.data as { source?: string; type?: string; token?: unknown; binding?: unknown; url?: unknown } | null;
    if (event.source !== opener || event.origin !== window.location.origin || data?.source !== SOURCE || data.type !== 'sign-in') return;
    if (started || typeof data.token !== 'string' || typeof data.binding !== 'string' || typeof data.url !== 'string') return;
    started = true;
    token = data.token;
    const url = data.url;
    void call<{ bound: boolean }>('POST', `oauth/bind${lookQuery()}`, { binding: data.binding }).then((r) => {
      if (r.ok) window.location.replace(url);
      else showError(r.error.code ?? 'unexpected', r.error.message ?? tr('somethingWrong'));
    });
  });
  opener.postMessage({ source: SOURCE, type: 'sign-in-ready' }, window.location.origin);
}

function main(): void {
  if (document.getElementById('latchkey-redirect')) {
    mainSignInPopup();
    return;
  }
  if (embed) {
    mainEmbedded(embed);
    return;
  }
  const choice = jsonData<AccountChoiceView>('latchkey-choice');
  if (choice) {
    renderChoice(choice);
    return;
  }
  const result = document.getElementById('latchkey-result');
  if (result) {
    const data = JSON.parse(result.textContent ?? '{}') as { event: UiEvent; name?: string };
    notify(data.event);
    if (data.event.type === 'connect' && window.opener) setTimeout(() => window.close(), CLOSE_AFTER_SUCCESS_MS);
    return;
  }
  const params = new URLSearchParams(window.location.search);
  const fromUrl = params.get('session_token');
  if (fromUrl) {
    // Keep the token out of the history and out of any Referer.
    history.replaceState(null, '', window.location.pathname);
    void begin(fromUrl);
    return;
  }
  const opener = window.opener ?? (window.parent !== window ? window.parent : null);
  if (!opener) {
    showError('missing_session', 'This page needs a connect session token. Open it from the application.');
    return;
  }
  window.addEventListener('message', (event: MessageEvent) => {
    const data = event.data as { source?: string; type?: string; token?: string } | null;
    if (event.source !== opener || data?.source !== CLIENT_SOURCE || data.type !== 'session' || typeof data.token !== 'string' || token)
      return;
    peerOrigin = event.origin;
    try {
      sessionStorage.setItem(ORIGIN_KEY, event.origin);
    } catch {
      /* no storage: events then reach the opener until the provider redirect only */
    }
    void begin(data.token);
  });
  (opener as Window).postMessage({ source: SOURCE, type: 'ready' }, '*');
}

main();
