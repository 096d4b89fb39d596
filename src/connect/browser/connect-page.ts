/**
 * The Connect UI's script (runs in the end user's browser; no framework). It waits for the session
 * token (from `?session_token=` or from the frontend client by postMessage), lists the session's
 * integrations or goes straight to the only one, runs the OAuth redirect or the form, and reports
 * `connect` / `error` events to the window that opened it. On the callback page it only reports.
 */

interface FormField { name: string; label: string; secret: boolean; required: boolean }
interface IntegrationView {
  id: string; name: string; provider: string; providerDisplayName: string; authMode: string;
  flow: 'oauth' | 'form' | 'unsupported'; fields: FormField[]; configFields: FormField[];
}
interface SessionView { reconnect: boolean; integrations: IntegrationView[] }
type UiEvent =
  | { type: 'connect'; providerConfigKey: string; connectionId?: string }
  | { type: 'error'; error: { code: string; message: string }; providerConfigKey?: string };
interface ApiErrorBody { error?: { code?: string; message?: string; errors?: Array<{ path?: string; message: string }> } }

const SOURCE = 'latchkey-connect';
const ORIGIN_KEY = 'latchkey.openerOrigin';
const app = document.getElementById('app')!;
const apiUrl = (path: string) => new URL(`api/${path}`, import.meta.url).href;
let token = '';
let integrations: IntegrationView[] = [];

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] {
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

function notify(event: UiEvent): void {
  const target = window.opener ?? (window.parent !== window ? window.parent : null);
  if (!target) return;
  const origin = sessionStorage.getItem(ORIGIN_KEY) ?? '*';
  (target as Window).postMessage({ source: SOURCE, ...event }, origin);
}

function showError(code: string, message: string, providerConfigKey?: string, retry?: () => void): void {
  notify({ type: 'error', error: { code, message }, ...(providerConfigKey ? { providerConfigKey } : {}) });
  const actions = el('div', { class: 'actions' });
  if (retry) {
    const again = el('button', { type: 'button', class: 'secondary' }, 'Try again');
    again.addEventListener('click', retry);
    actions.append(again);
  }
  show(el('div', { class: 'card error', role: 'alert' },
    el('h1', {}, 'Could not connect'), el('p', {}, message), el('p', { class: 'code' }, `Error code: ${code}`), actions));
}

function showSuccess(name: string, providerConfigKey: string, connectionId?: string): void {
  notify({ type: 'connect', providerConfigKey, ...(connectionId ? { connectionId } : {}) });
  show(el('div', { class: 'card success', role: 'status' },
    el('div', { class: 'check', 'aria-hidden': 'true' }, '✓'),
    el('h1', {}, `${name} is connected`), el('p', {}, 'You can close this window.')));
  if (window.opener) setTimeout(() => window.close(), 1500);
}

async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ ok: true; data: T } | { ok: false; status: number; error: NonNullable<ApiErrorBody['error']> }> {
  let res: Response;
  try {
    res = await fetch(apiUrl(path), {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch {
    return { ok: false, status: 0, error: { code: 'network_error', message: 'The connection service could not be reached. Check your connection and try again.' } };
  }
  const json = (await res.json().catch(() => ({}))) as { data?: T } & ApiErrorBody;
  if (res.ok && json.data !== undefined) return { ok: true, data: json.data };
  return { ok: false, status: res.status, error: { code: json.error?.code ?? 'unexpected', message: json.error?.message ?? 'Something went wrong.', errors: json.error?.errors } };
}

function header(title: string, subtitle?: string): HTMLElement {
  return el('header', {}, el('h1', {}, title), ...(subtitle ? [el('p', { class: 'muted' }, subtitle)] : []));
}

function backButton(): Node[] {
  if (integrations.length < 2) return [];
  const b = el('button', { type: 'button', class: 'link' }, '← All integrations');
  b.addEventListener('click', renderList);
  return [b];
}

function renderList(): void {
  const list = el('ul', { class: 'integrations' });
  for (const i of integrations) {
    const button = el('button', { type: 'button', class: 'integration', 'data-integration': i.id },
      el('span', { class: 'avatar', 'aria-hidden': 'true' }, i.providerDisplayName.slice(0, 1).toUpperCase()),
      el('span', { class: 'names' }, el('strong', {}, i.name), el('span', { class: 'muted' }, i.providerDisplayName)),
      el('span', { class: 'chevron', 'aria-hidden': 'true' }, '›'));
    button.addEventListener('click', () => void pick(i));
    list.append(el('li', {}, button));
  }
  show(el('div', { class: 'card' }, header('Connect an account', 'Choose the service you want to connect.'), list));
}

function renderForm(i: IntegrationView, fields: FormField[], submitLabel: string, onSubmit: (values: Record<string, string>, config: Record<string, string>) => Promise<void>): void {
  const form = el('form', { novalidate: '' });
  const errorBox = el('p', { class: 'form-error', role: 'alert', hidden: '' });
  const all = [...fields.map((f) => ({ ...f, group: 'values' })), ...i.configFields.map((f) => ({ ...f, group: 'config' }))];
  for (const f of all) {
    const id = `f-${f.group}-${f.name}`;
    const input = el('input', { id, name: f.name, 'data-group': f.group, type: f.secret ? 'password' : 'text', autocomplete: 'off', spellcheck: 'false' });
    if (f.required) input.required = true;
    form.append(el('div', { class: 'field' }, el('label', { for: id }, f.label), input, el('small', { class: 'field-error', id: `${id}-error` })));
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
        field.textContent = 'Required';
        input.setAttribute('aria-invalid', 'true');
        missing = true;
      }
      (input.dataset.group === 'config' ? config : values)[input.name] = input.value;
    }
    if (missing) return;
    submit.disabled = true;
    submit.textContent = 'Connecting…';
    errorBox.hidden = true;
    onSubmit(values, config).catch((err: unknown) => {
      const e2 = err as { message?: string; errors?: Array<{ path?: string; message: string }> };
      for (const fe of e2.errors ?? []) {
        const [group, name] = (fe.path ?? '').split('.');
        const target = form.querySelector<HTMLElement>(`#f-${group === 'connectionConfig' ? 'config' : 'values'}-${name}-error`);
        if (target) target.textContent = fe.message;
      }
      errorBox.textContent = e2.message ?? 'Something went wrong.';
      errorBox.hidden = false;
      submit.disabled = false;
      submit.textContent = submitLabel;
    });
  });
  show(el('div', { class: 'card' }, ...backButton(), header(`Connect ${i.name}`, i.name === i.providerDisplayName ? undefined : i.providerDisplayName), form));
  form.querySelector('input')?.focus();
}

async function startOAuth(i: IntegrationView, config: Record<string, string>): Promise<void> {
  loading(`Redirecting to ${i.providerDisplayName}…`);
  const r = await call<{ url: string }>('POST', 'oauth/start', { integration: i.id, connectionConfig: config });
  if (!r.ok) {
    if (r.status === 400 && r.error.errors && i.configFields.length) {
      throw r.error;
    }
    showError(r.error.code ?? 'unexpected', r.error.message ?? 'Something went wrong.', i.id, () => void pick(i));
    return;
  }
  window.location.assign(r.data.url);
}

async function pick(i: IntegrationView): Promise<void> {
  if (i.flow === 'unsupported') {
    show(el('div', { class: 'card' }, ...backButton(), header(`${i.name}`, i.providerDisplayName),
      el('p', { class: 'notice' }, `Connecting ${i.providerDisplayName} (${i.authMode}) is not supported here yet.`),
      el('p', { class: 'muted' }, 'Please contact the application you came from.')));
    notify({ type: 'error', error: { code: 'unsupported_auth_mode', message: `${i.authMode} is not supported yet` }, providerConfigKey: i.id });
    return;
  }
  if (i.flow === 'oauth') {
    if (i.configFields.length) renderForm(i, [], 'Continue', (_v, config) => startOAuth(i, config));
    else await startOAuth(i, {});
    return;
  }
  renderForm(i, i.fields, 'Connect', async (values, config) => {
    const r = await call<{ providerConfigKey: string; connectionId?: string }>('POST', 'forms', { integration: i.id, values, connectionConfig: config });
    if (!r.ok) {
      if (r.status === 400) throw r.error;
      showError(r.error.code ?? 'unexpected', r.error.message ?? 'Something went wrong.', i.id, () => void pick(i));
      return;
    }
    showSuccess(i.name, r.data.providerConfigKey, r.data.connectionId);
  });
}

async function begin(sessionToken: string): Promise<void> {
  token = sessionToken;
  const r = await call<SessionView>('GET', 'session');
  if (!r.ok) {
    showError(r.error.code ?? 'unexpected', r.error.message ?? 'Something went wrong.');
    return;
  }
  integrations = r.data.integrations;
  if (integrations.length === 0) {
    showError('no_integrations', 'There is nothing to connect in this session.');
    return;
  }
  if (integrations.length === 1) await pick(integrations[0]!);
  else renderList();
}

function main(): void {
  const result = document.getElementById('latchkey-result');
  if (result) {
    const data = JSON.parse(result.textContent ?? '{}') as { event: UiEvent; name?: string };
    if (data.event.type === 'connect') {
      notify(data.event);
      if (window.opener) setTimeout(() => window.close(), 1500);
    } else notify(data.event);
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
    if (event.source !== opener || data?.source !== 'latchkey-client' || data.type !== 'session' || typeof data.token !== 'string' || token) return;
    sessionStorage.setItem(ORIGIN_KEY, event.origin);
    void begin(data.token);
  });
  (opener as Window).postMessage({ source: SOURCE, type: 'ready' }, '*');
}

main();
