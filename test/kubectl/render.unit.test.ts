import type { ConnectionResource } from '../../src/k8s/resources.js';
import type { OplogEntry } from '../../src/oplog/entry.js';
import { renderStatus, stateOf, statusReport } from '../../src/kubectl/status.js';
import { BINDINGS_NOT_INSTALLED, renderBindings, renderLog } from '../../src/kubectl/views.js';
import { runCommand, type PluginIo } from '../../src/kubectl/commands.js';
import { parseArgs } from '../../src/kubectl/args.js';
import { table } from '../../src/kubectl/table.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const iso = (offsetMs: number) => new Date(NOW + offsetMs).toISOString();
const H = 3_600_000;

function connection(name: string, status: ConnectionResource['status'], namespace = 'team'): ConnectionResource {
  return {
    apiVersion: 'latchkey.dev/v1alpha1',
    kind: 'Connection',
    metadata: { name, namespace },
    spec: {
      integration: 'github',
      provider: 'github',
      connectionId: name.replace('github-', ''),
      authMode: 'OAUTH2',
      endUser: { id: `user-${name}` },
    },
    status,
  } as ConnectionResource;
}
const ready = (status: 'True' | 'False', reason: string, message = '') => ({
  type: 'Ready',
  status,
  reason,
  message,
  lastTransitionTime: iso(-2 * H),
});

const healthy = connection('github-a', { conditions: [ready('True', 'Ready')], expiresAt: iso(H / 2), nextRefreshAt: iso(H / 4) });
const expiring = connection('github-b', { conditions: [ready('True', 'Ready')], expiresAt: iso(3 * H) });
const failing = connection('github-c', {
  conditions: [ready('False', 'ReauthorizationRequired', 'The provider refused these credentials.')],
  expiresAt: iso(-H),
  errors: [
    { type: 'auth', logId: 'github-c.old', message: 'older', occurredAt: iso(-3 * H) },
    { type: 'auth', logId: 'github-c.0001', message: 'invalid_grant, HTTP 400: grant revoked', occurredAt: iso(-2 * H) },
  ],
});
const fresh = connection('github-d', undefined);
const later = connection('github-e', { conditions: [ready('True', 'Ready')], expiresAt: iso(48 * H) });

describe('the status report', () => {
  const report = statusReport([healthy, expiring, failing, fresh, later], NOW, 24 * H);

  it('counts connections by state: Ready, else the Ready reason, Unknown before the first reconcile', () => {
    expect(report.byState).toEqual({ Ready: 3, ReauthorizationRequired: 1, Unknown: 1 });
    expect(stateOf(fresh)).toBe('Unknown');
  });

  it('lists tokens expiring within the window with no refresh planned before they do', () => {
    // a: refreshed before it expires; e: expires after the window; c: already expired, no refresh planned.
    expect(report.expiringSoon.map((e) => e.name)).toEqual(['github-c', 'github-b']);
    expect(report.expiringSoon[1]).toMatchObject({ namespace: 'team', integration: 'github', connectionId: 'b', expiresAt: iso(3 * H) });
  });

  it('lists failing connections with the last error recorded against them', () => {
    expect(report.failing).toEqual([
      {
        namespace: 'team',
        name: 'github-c',
        integration: 'github',
        connectionId: 'c',
        endUser: 'user-github-c',
        reason: 'ReauthorizationRequired',
        message: 'The provider refused these credentials.',
        since: iso(-2 * H),
        lastError: { type: 'auth', logId: 'github-c.0001', message: 'invalid_grant, HTTP 400: grant revoked', occurredAt: iso(-2 * H) },
      },
    ]);
  });

  it('renders as kubectl tables, with a NAMESPACE column across namespaces only', () => {
    const text = renderStatus(report, { now: NOW, allNamespaces: false, expiringWithinMs: 24 * H });
    const lines = text.split('\n');
    expect(lines[0]).toBe('STATE                     CONNECTIONS');
    expect(lines[1]).toBe('Ready                     3');
    expect(text).toContain('Expiring within 24h with no refresh planned: 2');
    expect(text).toMatch(/github-b\s+github\s+b\s+user-github-b\s+2026-03-01T15:00:00.000Z \(in 3h\)/);
    expect(text).toContain('Failing: 1');
    expect(text).toMatch(
      /github-c\s+github\s+c\s+ReauthorizationRequired\s+2h\s+invalid_grant, HTTP 400: grant revoked \(log github-c.0001\)/,
    );
    expect(text).not.toMatch(/NAMESPACE/);
    expect(renderStatus(report, { now: NOW, allNamespaces: true, expiringWithinMs: 24 * H })).toMatch(/^NAMESPACE\s+NAME\s+INTEGRATION/m);
    expect(renderStatus(statusReport([], NOW, H), { now: NOW, allNamespaces: false, expiringWithinMs: H })).toBe('No connections found.\n');
    expect(renderStatus(report, { now: NOW, allNamespaces: false, expiringWithinMs: 30 * 60_000 })).toContain('Expiring within 30m ');
    expect(renderStatus(report, { now: NOW, allNamespaces: false, expiringWithinMs: 7 * 24 * H })).toContain('Expiring within 7d ');
  });
});

describe('tables', () => {
  it('pad each column to its widest cell and keep a message on one line', () => {
    expect(
      table(
        ['a', 'long header'],
        [
          ['x\ny', 'v'],
          ['wide cell', ''],
        ],
      ),
    ).toBe('A           LONG HEADER\nx y         v\nwide cell\n');
  });

  it('show the operation log oldest first with every message', () => {
    const entries: OplogEntry[] = [
      { id: 'github-a.1', time: iso(-60_000), namespace: 'team', operation: 'import', outcome: 'success', messages: ['Imported'] },
      {
        id: 'github-a.2',
        time: iso(0),
        namespace: 'team',
        operation: 'refresh',
        step: 'request',
        outcome: 'failure',
        durationMs: 42,
        messages: ['Token refresh failed', 'Provider answered HTTP 400: invalid_grant'],
      },
    ];
    const lines = renderLog(entries).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TIME\s+OPERATION\s+STEP\s+OUTCOME\s+DURATION\s+ID\s+MESSAGE$/);
    expect(lines[1]).toMatch(/import\s+-\s+success\s+-\s+github-a.1\s+Imported$/);
    expect(lines[2]).toMatch(
      /refresh\s+request\s+failure\s+42ms\s+github-a.2\s+Token refresh failed \| Provider answered HTTP 400: invalid_grant$/,
    );
    expect(renderLog([])).toMatch(/No operation log entries/);
  });

  it('show a CredentialBinding with its source connection, Secret and readiness', () => {
    const text = renderBindings(
      [
        {
          metadata: { name: 'gh-token', namespace: 'app', creationTimestamp: iso(-2 * H) },
          spec: { connectionRef: { namespace: 'team', integration: 'github', connectionId: 'a' } },
          status: {
            secretName: 'gh-token',
            conditions: [{ type: 'Ready', status: 'True', reason: 'Synced' }],
            expiresAt: iso(H / 2),
            lastSyncTime: iso(-60_000),
          },
        },
        { metadata: { name: 'pending', namespace: 'app' } },
      ],
      NOW,
      true,
    );
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAMESPACE\s+NAME\s+CONNECTION\s+SECRET\s+READY\s+REASON\s+EXPIRES\s+SYNCED\s+AGE$/);
    expect(lines[1]).toMatch(/^app\s+gh-token\s+team\/github\/a\s+gh-token\s+True\s+Synced\s+in 30m\s+60s ago\s+2h$/);
    expect(lines[2]).toMatch(/^app\s+pending\s+-\s+-\s+Unknown\s+-\s+-\s+-\s+-$/);
  });
});

describe('commands over a client', () => {
  function io() {
    const out: string[] = [];
    const err: string[] = [];
    const sink: PluginIo = {
      out: (t) => void out.push(t),
      err: (t) => void err.push(t),
      now: () => NOW,
      sleep: async () => undefined,
      fetch: globalThis.fetch,
    };
    return { sink, out, err };
  }
  const args = (argv: string[]) => {
    const r = parseArgs(argv);
    if (!r.ok || !('args' in r)) throw new Error('bad test arguments');
    return r.args;
  };
  // A stand-in for src/k8s/plugin-client.ts (the cluster test runs the real one against the API server).
  const client = {
    namespace: 'team',
    listConnections: async () => [healthy, failing],
    getConnection: async () => undefined,
    requestRefresh: async () => healthy,
    connectionLog: async () => [],
    listBindings: async () => ({ installed: false as const }),
    bearerToken: async () => undefined,
  };

  it('status -o json is the report, parseable, with the namespace asked', async () => {
    const { sink, out } = io();
    expect(await runCommand(args(['status', '-o', 'json']), client, sink)).toBe(0);
    const parsed = JSON.parse(out.join('')) as Record<string, unknown>;
    expect(parsed).toEqual(JSON.parse(JSON.stringify({ namespace: 'team', ...statusReport([healthy, failing], NOW, 24 * H) })));
  });

  it('bindings says the CRD is not installed, exit 1', async () => {
    const { sink, out, err } = io();
    expect(await runCommand(args(['bindings']), client, sink)).toBe(1);
    expect(out).toEqual([]);
    expect(err.join('')).toContain(BINDINGS_NOT_INSTALLED);
  });

  it('refresh and logs of a connection that does not exist name it and the namespace', async () => {
    for (const command of ['refresh', 'logs'])
      await expect(runCommand(args([command, 'nope']), client, io().sink)).rejects.toThrow(
        /connection "nope" not found in namespace "team"/,
      );
  });

  it('refresh takes a later request’s answer as its own (someone asked again meanwhile), and a failure exits 1', async () => {
    const answered = (outcome: string) => ({
      ...healthy,
      metadata: {
        ...healthy.metadata,
        annotations: {
          'latchkey.dev/refresh-request': JSON.stringify({ requestedAt: iso(5_000), outcome, at: iso(6_000), message: `${outcome} here` }),
        },
      },
    });
    for (const [outcome, code] of [
      ['Refreshed', 0],
      ['Failed', 1],
    ] as const) {
      const { sink, out, err } = io();
      const asked: string[] = [];
      const c = {
        ...client,
        getConnection: async () => answered(outcome),
        requestRefresh: async (_ns: string, _name: string, at: string) => (asked.push(at), healthy),
      };
      expect(await runCommand(args(['refresh', 'github-a']), c, sink)).toBe(code);
      expect(asked).toEqual([iso(0)]);
      expect((code ? err : out).join('')).toBe(`connection/github-a ${outcome}: ${outcome} here\n`);
    }
  });

  it('connect-link refuses a kubeconfig user without a bearer token before calling anything', async () => {
    await expect(
      runCommand(args(['connect-link', 'github', '--end-user', 'u1', '--server', 'http://127.0.0.1:9']), client, io().sink),
    ).rejects.toThrow(/presents no bearer token/);
  });
});

describe('connect-link', () => {
  // A hand-written stand-in for Latchkey's server (its Kubernetes-identity authentication is another
  // part of issue 56): it records what the plugin sends and answers as POST /connect/sessions does.
  it('asks the server with the person’s Kubernetes token and the namespace, and prints the link alone', async () => {
    const { createServer } = await import('node:http');
    const seen: Array<{ url?: string; headers: Record<string, unknown>; body: string }> = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ url: req.url, headers: req.headers, body });
        const refused = req.headers.authorization !== 'Bearer kube-token';
        res.writeHead(refused ? 401 : 201, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify(
            refused
              ? { error: { code: 'unauthorized', message: 'no such key' } }
              : {
                  data: {
                    token: 'sess',
                    expires_at: '2026-03-01T12:30:00Z',
                    connect_link: 'https://lk.example/connect?session_token=sess',
                  },
                },
          ),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const out: string[] = [];
      const sink: PluginIo = { out: (t) => void out.push(t), err: () => undefined, now: () => NOW, sleep: async () => undefined, fetch };
      const parsed = parseArgs([
        'connect-link',
        'github',
        '--end-user',
        'u-42',
        '--end-user-email',
        'ada@example.com',
        '-n',
        'team',
        '--server',
        `${url}/`,
      ]);
      if (!parsed.ok || !('args' in parsed)) throw new Error('bad test arguments');
      const client = {
        namespace: 'team',
        listConnections: async () => [],
        getConnection: async () => undefined,
        requestRefresh: async () => healthy,
        connectionLog: async () => [],
        listBindings: async () => ({ installed: false as const }),
        bearerToken: async (): Promise<string | undefined> => 'kube-token',
      };
      expect(await runCommand(parsed.args, client, sink)).toBe(0);
      expect(out.join('')).toBe('https://lk.example/connect?session_token=sess\n');
      expect(seen[0]).toMatchObject({
        url: '/connect/sessions',
        headers: { authorization: 'Bearer kube-token', 'latchkey-namespace': 'team' },
      });
      expect(JSON.parse(seen[0]!.body)).toEqual({ end_user: { id: 'u-42', email: 'ada@example.com' }, allowed_integrations: ['github'] });

      await expect(runCommand(parsed.args, { ...client, bearerToken: async () => 'other' }, sink)).rejects.toThrow(
        /refused the Connect session \(HTTP 401, unauthorized: no such key\)/,
      );
    } finally {
      server.close();
    }
  });
});
