/**
 * The operations dashboard's page script: sign-in, integrations, connections (search, paging),
 * a connection's page (masked credentials, conditions, its log, actions), the log search and one
 * entry by ID. Routing is the URL hash; everything is built with DOM calls and textContent (never
 * innerHTML), so nothing a provider or an application wrote can run as markup.
 */

type Json = Record<string, any>;
type Child = Node | string | null | undefined | false;

const API = `${location.pathname.replace(/\/+$/, '')}/api`;
/** Shipped providers' logos, served by the same server as the dashboard. */
const LOGOS = `${location.pathname.replace(/\/dashboard\/*$/, '')}/connect/logos/`;
const app = document.getElementById('app')!;

function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | ((e: Event) => void)> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, ''), v);
    else el.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${API}${path}`, {
    method,
    credentials: 'same-origin',
    headers: { 'x-latchkey-dashboard': '1', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 204) return undefined;
  const data = (await res.json().catch(() => ({}))) as Json;
  if (!res.ok) {
    if (res.status === 401 && path !== '/session') showSignIn();
    throw new ApiFailure(res.status, data.error?.code ?? 'error', data.error?.message ?? `HTTP ${res.status}`);
  }
  return data;
}

const fmt = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString('en-GB', { timeZone: 'UTC' }) + ' UTC' : '—');
const badge = (text: string, cls = text) => h('span', { class: `badge ${cls}` }, text.replace(/_/g, ' '));
const q = (params: Record<string, string | undefined>) => {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) s.set(k, v);
  const t = s.toString();
  return t ? `?${t}` : '';
};
const connectionHref = (integration: string, id: string) => `#/connection/${encodeURIComponent(integration)}/${encodeURIComponent(id)}`;
const logHref = (id: string) => `#/logs/${encodeURIComponent(id)}`;

let signedIn: Json | undefined;
let renders = 0;
let routing = 0;

/** Renders only while the route that asked is still the newest: a slow page must not replace a newer one. */
function renderer(): (...content: Child[]) => void {
  const mine = routing;
  return (...content) => {
    if (mine === routing) render(...content);
  };
}

function render(...content: Child[]): void {
  const route = location.hash.split(/[/?]/)[1] ?? 'connections';
  const nav = (id: string, label: string) =>
    h('a', { href: `#/${id}`, ...(route.startsWith(id.slice(0, 5)) ? { 'aria-current': 'page' } : {}) }, label);
  app.replaceChildren(
    h(
      'header',
      { class: 'top' },
      h('span', { class: 'brand' }, 'Latchkey'),
      h('nav', {}, nav('integrations', 'Integrations'), nav('connections', 'Connections'), nav('logs', 'Logs')),
      h('span', { class: 'muted', id: 'environment' }, signedIn ? `${signedIn.environment} · ${signedIn.namespace}` : ''),
      h('button', { id: 'sign-out', onclick: () => void signOutNow() }, 'Sign out'),
    ),
    h('main', {}, ...content),
  );
}

function showSignIn(message?: string): void {
  signedIn = undefined;
  const error = h('p', { class: 'error', id: 'sign-in-error', role: 'alert' }, message ?? '');
  const input = h('input', { id: 'secret-key', name: 'secret_key', type: 'password', autocomplete: 'off', required: '' });
  const form = h(
    'form',
    {
      id: 'sign-in',
      onsubmit: (e: Event) => {
        e.preventDefault();
        void (async () => {
          try {
            signedIn = await call('POST', '/session', { secret_key: input.value });
            input.value = '';
            await route();
          } catch (err) {
            error.textContent = (err as Error).message;
          }
        })();
      },
    },
    h('div', { class: 'field' }, h('label', { for: 'secret-key' }, "Environment's secret key"), input),
    error,
    h('button', { class: 'primary', type: 'submit' }, 'Sign in'),
  );
  app.replaceChildren(
    h(
      'main',
      {},
      h(
        'div',
        { class: 'card signin' },
        h('h1', {}, 'Latchkey dashboard'),
        h('p', { class: 'muted' }, 'Sign in with the secret key of the environment to operate.'),
        form,
      ),
    ),
  );
  input.focus();
}

async function signOutNow(): Promise<void> {
  await call('DELETE', '/session').catch(() => undefined);
  location.hash = '';
  showSignIn();
}

// ---- pages ----

async function integrationsPage(): Promise<void> {
  const show = renderer();
  const { integrations } = await call('GET', '/integrations');
  const rows = (integrations as Json[]).map((i) =>
    h(
      'tr',
      { 'data-integration': i.id },
      h(
        'td',
        {},
        h(
          'div',
          { class: 'with-logo' },
          i.has_logo
            ? h('img', { class: 'logo', src: `${LOGOS}${encodeURIComponent(String(i.provider))}.svg`, alt: '', width: '28', height: '28' })
            : h('span', { class: 'logo initial', 'aria-hidden': 'true' }, String(i.display_name).slice(0, 1).toUpperCase()),
          h('div', {}, h('strong', {}, i.display_name), h('div', { class: 'muted mono' }, i.id)),
        ),
      ),
      h(
        'td',
        {},
        i.provider,
        h('div', { class: 'muted' }, i.auth_mode ?? ''),
        // Where the provider sends its webhooks (docs/provider-webhooks.md).
        i.webhook_url ? h('div', { class: 'muted mono webhook-url', title: 'Webhook URL' }, `Webhooks: ${String(i.webhook_url)}`) : null,
      ),
      h('td', {}, i.ready ? badge('ready') : badge('not ready', 'not-ready'), i.reason ? h('div', { class: 'muted' }, i.reason) : null),
      h('td', {}, h('a', { href: `#/connections${q({ integration: i.id })}` }, String(i.connections))),
      h('td', {}, h('button', { class: 'test-connection', onclick: () => void testConnection(i.id) }, 'Test connection')),
    ),
  );
  show(
    h(
      'div',
      { class: 'card' },
      h('h1', {}, 'Integrations'),
      table(['Integration', 'Provider', 'Readiness', 'Connections', ''], rows, 'No integrations in this environment.'),
    ),
  );
}

/** Opens the Connect UI with a fresh session for this integration (the operator acts as a test end user). */
async function testConnection(integration: string): Promise<void> {
  const popup = window.open('about:blank', '_blank');
  const s = await call('POST', '/connect/sessions', { end_user: { id: 'dashboard-test' }, allowed_integrations: [integration] });
  const url = s.data.connect_link as string;
  if (popup) popup.location.href = url;
  else location.assign(url);
}

function table(head: string[], rows: HTMLElement[], empty: string): HTMLElement {
  if (!rows.length) return h('p', { class: 'muted', id: 'empty' }, empty);
  return h('table', {}, h('thead', {}, h('tr', {}, ...head.map((t) => h('th', {}, t)))), h('tbody', {}, ...rows));
}

async function connectionsPage(params: URLSearchParams): Promise<void> {
  const show = renderer();
  const search = params.get('search') ?? '';
  const state = params.get('state') ?? '';
  const integration = params.get('integration') ?? '';
  const cursor = params.get('cursor') ?? '';
  const data = await call('GET', `/connections${q({ search, state, integration, cursor, limit: params.get('limit') ?? undefined })}`);
  const searchInput = h('input', { id: 'search', type: 'search', value: search, placeholder: 'Connection ID, end user or e-mail' });
  const stateSelect = h(
    'select',
    { id: 'state' },
    ...['', 'ready', 'needs_reauthorization', 'refreshing', 'failing'].map((s) =>
      h('option', { value: s, ...(s === state ? { selected: '' } : {}) }, s ? s.replace(/_/g, ' ') : 'any state'),
    ),
  );
  const go = (extra: Record<string, string | undefined> = {}) => {
    location.hash = `#/connections${q({ search: searchInput.value, state: stateSelect.value, integration, ...extra })}`;
  };
  const rows = (data.connections as Json[]).map((c) =>
    h(
      'tr',
      {
        class: 'clickable',
        'data-connection': c.connection_id,
        onclick: () => (location.hash = connectionHref(c.integration, c.connection_id)),
      },
      h(
        'td',
        {},
        h('a', { href: connectionHref(c.integration, c.connection_id) }, c.connection_id),
        h('div', { class: 'muted mono' }, c.integration),
      ),
      h('td', {}, c.end_user?.id ?? '—', c.end_user?.email ? h('div', { class: 'muted' }, c.end_user.email) : null),
      h('td', {}, badge(c.state)),
      h('td', {}, fmt(c.expires_at)),
      h('td', {}, fmt(c.last_refreshed_at)),
      h('td', {}, fmt(c.last_fetched_at)),
      h('td', {}, c.errors.length ? h('span', { class: 'error' }, String(c.errors.length)) : '0'),
    ),
  );
  show(
    h(
      'div',
      { class: 'card' },
      h('h1', {}, 'Connections', integration ? h('span', { class: 'muted' }, ` · ${integration}`) : null),
      h(
        'form',
        { class: 'toolbar', id: 'search-form', onsubmit: (e: Event) => (e.preventDefault(), go()) },
        h('div', { class: 'field' }, h('label', { for: 'search' }, 'Search'), searchInput),
        h('div', { class: 'field' }, h('label', { for: 'state' }, 'State'), stateSelect),
        h('button', { class: 'primary', type: 'submit' }, 'Search'),
      ),
      table(['Connection', 'End user', 'State', 'Expires', 'Last refresh', 'Last fetch', 'Errors'], rows, 'No connections match.'),
      h(
        'div',
        { class: 'pager' },
        h('span', { class: 'muted', id: 'total' }, `${data.total_matching} matching`),
        data.next_cursor ? h('button', { id: 'next-page', onclick: () => go({ cursor: data.next_cursor }) }, 'Next page →') : null,
      ),
    ),
  );
}

function dl(entries: Array<[string, Child]>): HTMLElement {
  return h('dl', {}, ...entries.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v ?? '—')]));
}

async function connectionPage(integration: string, connectionId: string, notice?: Child): Promise<void> {
  const show = renderer();
  const c = await call('GET', `/connection${q({ integration, connection_id: connectionId })}`);
  const logs = await call('GET', `/logs${q({ integration, connection_id: connectionId, limit: '20' })}`);
  const status = h('p', { id: 'action-status', role: 'status' }, notice ?? '');
  const act = (label: string, id: string, cls: string, run: () => Promise<void>) =>
    h(
      'button',
      {
        id,
        class: cls,
        onclick: (e: Event) => {
          const b = e.currentTarget as HTMLButtonElement;
          b.disabled = true;
          status.textContent = `${label}…`;
          run()
            .catch((err: unknown) => {
              status.replaceChildren(h('span', { class: 'error' }, (err as Error).message));
            })
            .finally(() => (b.disabled = false));
        },
      },
      label,
    );
  const reconnectOut = h('div', { id: 'reconnect-link' });
  show(
    h(
      'div',
      { class: 'card' },
      h('p', {}, h('a', { href: `#/connections${q({ integration })}` }, '← Connections')),
      h('h1', { id: 'connection-title' }, connectionId, ' ', badge(c.state)),
      dl([
        ['Integration', `${c.integration} (${c.provider}, ${c.auth_mode})`],
        ['End user', c.end_user ? `${c.end_user.id}${c.end_user.email ? ` <${c.end_user.email}>` : ''}` : null],
        ['Created', fmt(c.created_at)],
        ['Expires', fmt(c.expires_at)],
        ['Next refresh', fmt(c.next_refresh_at)],
        ['Last refresh', fmt(c.last_refreshed_at)],
        ['Last fetch', fmt(c.last_fetched_at)],
        ['Metadata', h('pre', {}, JSON.stringify(c.metadata, null, 2))],
        ['Configuration', h('pre', {}, JSON.stringify(c.connection_config, null, 2))],
        ['Scopes granted', c.granted_scopes ? h('span', { id: 'granted-scopes' }, (c.granted_scopes as string[]).join(' ')) : null],
        [
          'Credentials',
          h(
            'pre',
            { id: 'credentials' },
            Object.entries(c.credentials as Record<string, string>)
              .map(([k, v]) => `${k}: ${v}`)
              .join('\n'),
          ),
        ],
      ]),
      h(
        'div',
        { class: 'actions' },
        act('Force refresh', 'force-refresh', '', async () => {
          try {
            await call('POST', '/connection/refresh', { integration, connection_id: connectionId });
            await connectionPage(integration, connectionId, 'Refreshed.');
          } catch (err) {
            await connectionPage(integration, connectionId, h('span', { class: 'error' }, `Refresh failed: ${(err as Error).message}`));
          }
        }),
        act('Create reconnect link', 'reconnect', '', async () => {
          const s = await call('POST', '/connect/sessions/reconnect', { connection_id: connectionId, integration_id: integration });
          reconnectOut.replaceChildren(
            h('p', {}, 'Send this link to the end user (valid until ', fmt(s.data.expires_at), '):'),
            h('pre', { class: 'mono', id: 'reconnect-url' }, s.data.connect_link),
          );
          status.textContent = '';
        }),
        act('Delete', 'delete', 'danger', async () => {
          if (!confirm(`Delete connection "${connectionId}" of ${integration} and its credentials? This cannot be undone.`)) {
            status.textContent = 'Not deleted.';
            return;
          }
          await call('DELETE', `/connections/${encodeURIComponent(connectionId)}${q({ provider_config_key: integration })}`);
          location.hash = `#/connections${q({ integration })}`;
        }),
      ),
      status,
      reconnectOut,
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', {}, 'Errors'),
      table(
        ['Type', 'When', 'Message', 'Log'],
        (c.errors as Json[]).map((e) =>
          h(
            'tr',
            { class: 'connection-error' },
            h('td', {}, e.type),
            h('td', {}, fmt(e.occurred_at)),
            h('td', {}, e.message ?? ''),
            h('td', {}, h('a', { href: logHref(e.log_id), class: 'log-id mono' }, e.log_id)),
          ),
        ),
        'No errors.',
      ),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', {}, 'Conditions'),
      table(
        ['Type', 'Status', 'Reason', 'Message', 'Since'],
        (c.conditions as Json[]).map((x) =>
          h('tr', {}, h('td', {}, x.type), h('td', {}, x.status), h('td', {}, x.reason), h('td', {}, x.message), h('td', {}, fmt(x.since))),
        ),
        'No conditions yet.',
      ),
    ),
    h('div', { class: 'card' }, h('h2', {}, 'Log'), logTable(logs.logs)),
  );
}

function logTable(entries: Json[]): HTMLElement {
  return table(
    ['Time', 'Operation', 'Outcome', 'Connection', 'Message', 'ID'],
    entries.map((e) =>
      h(
        'tr',
        { class: 'clickable log-row', onclick: () => (location.hash = logHref(e.id)) },
        h('td', {}, fmt(e.time)),
        h('td', {}, e.operation, e.step ? h('div', { class: 'muted' }, e.step) : null),
        h('td', {}, badge(e.outcome)),
        h('td', {}, e.connection_id ?? '—', h('div', { class: 'muted mono' }, e.integration ?? '')),
        h('td', {}, e.messages[0] ?? ''),
        h('td', {}, h('a', { href: logHref(e.id), class: 'mono' }, e.id)),
      ),
    ),
    'No log entries match.',
  );
}

async function logsPage(params: URLSearchParams): Promise<void> {
  const show = renderer();
  const f = (name: string) => params.get(name) ?? '';
  const input = (name: string, label: string, attrs: Record<string, string> = {}) =>
    h(
      'div',
      { class: 'field' },
      h('label', { for: `log-${name}` }, label),
      h('input', { id: `log-${name}`, name, value: f(name), ...attrs }),
    );
  const select = (name: string, label: string, options: string[]) =>
    h(
      'div',
      { class: 'field' },
      h('label', { for: `log-${name}` }, label),
      h(
        'select',
        { id: `log-${name}`, name },
        ...['', ...options].map((o) => h('option', { value: o, ...(o === f(name) ? { selected: '' } : {}) }, o || 'any')),
      ),
    );
  const openId = h('input', { id: 'open-log-id', placeholder: 'Paste a log_id', size: '48' });
  let data: Json = { logs: [], next_cursor: null };
  let failure: Child = null;
  try {
    data = await call(
      'GET',
      `/logs${q({ integration: f('integration'), connection_id: f('connection_id'), end_user_id: f('end_user_id'), operation: f('operation'), outcome: f('outcome'), cursor: f('cursor') })}`,
    );
  } catch (err) {
    failure = h('p', { class: 'error' }, (err as Error).message);
  }
  const form = h(
    'form',
    {
      class: 'toolbar',
      id: 'log-search',
      onsubmit: (e: Event) => {
        e.preventDefault();
        const values = Object.fromEntries(new FormData(e.target as HTMLFormElement).entries()) as Record<string, string>;
        location.hash = `#/logs${q(values)}`;
      },
    },
    input('integration', 'Integration'),
    input('connection_id', 'Connection ID'),
    input('end_user_id', 'End user'),
    select('operation', 'Operation', ['authorization', 'refresh', 'import', 'deletion', 'webhook', 'proxy', 'migration', 'access']),
    select('outcome', 'Outcome', ['success', 'failure']),
    h('button', { class: 'primary', type: 'submit' }, 'Search'),
  );
  show(
    h(
      'div',
      { class: 'card' },
      h('h1', {}, 'Logs'),
      h(
        'form',
        { class: 'toolbar', id: 'open-log', onsubmit: (e: Event) => (e.preventDefault(), (location.hash = logHref(openId.value.trim()))) },
        h('div', { class: 'field' }, h('label', { for: 'open-log-id' }, 'Open by ID'), openId),
        h('button', { type: 'submit' }, 'Open'),
      ),
      form,
      failure,
      logTable(data.logs),
      data.next_cursor
        ? h(
            'div',
            { class: 'pager' },
            h('span', {}),
            h('a', { href: `#/logs${q({ ...Object.fromEntries(params), cursor: data.next_cursor })}`, id: 'next-page' }, 'Older →'),
          )
        : null,
    ),
  );
}

async function logPage(id: string): Promise<void> {
  const show = renderer();
  try {
    const e = await call('GET', `/logs/${encodeURIComponent(id)}`);
    show(
      h(
        'div',
        { class: 'card', id: 'log-entry' },
        h('p', {}, h('a', { href: '#/logs' }, '← Logs')),
        h('h1', {}, `${e.operation}${e.step ? ` · ${e.step}` : ''} `, badge(e.outcome)),
        dl([
          ['ID', h('span', { class: 'mono', id: 'log-entry-id' }, e.id)],
          ['Time', fmt(e.time)],
          ['Integration', e.integration],
          [
            'Connection',
            e.connection_id && e.integration ? h('a', { href: connectionHref(e.integration, e.connection_id) }, e.connection_id) : null,
          ],
          ['End user', e.end_user_id],
          ['Duration', e.duration_ms === null ? null : `${e.duration_ms} ms`],
        ]),
        h('h2', {}, 'Messages'),
        h('pre', { id: 'log-messages' }, (e.messages as string[]).join('\n')),
      ),
    );
  } catch (err) {
    if (!(err instanceof ApiFailure) || err.status === 401) throw err;
    show(
      h(
        'div',
        { class: 'card' },
        h('h1', {}, 'Log entry not found'),
        h('p', { class: 'error', id: 'log-missing' }, err.message),
        h('p', {}, h('a', { href: '#/logs' }, '← Logs')),
      ),
    );
  }
}

async function route(): Promise<void> {
  const mine = ++routing;
  if (!signedIn) {
    try {
      signedIn = await call('GET', '/session');
    } catch {
      showSignIn();
      return;
    }
  }
  const [path, query] = location.hash.replace(/^#\/?/, '').split('?');
  const parts = (path ?? '').split('/').map(decodeURIComponent);
  const params = new URLSearchParams(query ?? '');
  try {
    if (parts[0] === 'integrations') await integrationsPage();
    else if (parts[0] === 'connection' && parts[1] && parts[2]) await connectionPage(parts[1], parts.slice(2).join('/'));
    else if (parts[0] === 'logs' && parts[1]) await logPage(parts.slice(1).join('/'));
    else if (parts[0] === 'logs') await logsPage(params);
    else await connectionsPage(params);
    if (mine === routing) document.body.dataset.rendered = String(++renders);
  } catch (err) {
    if ((err instanceof ApiFailure && err.status === 401) || mine !== routing) return;
    render(h('div', { class: 'card' }, h('p', { class: 'error' }, (err as Error).message)));
  }
}

window.addEventListener('hashchange', () => void route());
void route();
