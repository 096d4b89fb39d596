/**
 * Workloads calling the REST API and the proxy with their ServiceAccount's token instead of the
 * secret key (docs/workloads.md): the token reviewed by the real API server for the audience
 * `latchkey`, every right asked of its RBAC in the Environment's namespace, as the route table
 * (src/http/access-table.ts) says. Each route is refused without its right (403 naming it) and served
 * with exactly that right; a Role may name Connections or one Integration; another namespace's
 * ServiceAccount needs a RoleBinding in the Environment's; the caches' bounds are moved through with
 * the server's clock and the API calls counted; every refusal of a token.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { eventually } from '../../dev/cluster.js';
import { connectionObjectName } from '../../src/k8s/names.js';
import {
  canI,
  createServiceAccount,
  expiredToken,
  grant,
  requestToken,
  revoke,
  rule,
  type TestServiceAccount,
} from '../support/service-accounts.js';
import { countingReviews, startWorkloadBed, type WorkloadBed } from '../support/workload-bed.js';

let bed: WorkloadBed;
let n = 0;

beforeAll(async () => {
  bed = await startWorkloadBed('sa-access');
  await bed.addConnection('crm', 'c1');
  await bed.addConnection('crm', 'c2');
  await bed.addConnection('crm', 'c3');
  await bed.addConnection('crm', 'to-delete');
  await bed.addConnection('mail', 'm1');
}, 60_000);

afterAll(async () => {
  await bed?.close();
});

/** A fresh ServiceAccount in the Environment's namespace (or `namespace`) and a token of it. */
async function workload(namespace = bed.namespace): Promise<{ sa: TestServiceAccount; token: string }> {
  const sa = await createServiceAccount(bed.kc, namespace, `wl-${++n}`);
  return { sa, token: await requestToken(bed.kc, sa) };
}

const objectName = (integration: string, id: string) => connectionObjectName(integration, id);

interface Row {
  what: string;
  method: string;
  path: () => string;
  body?: () => unknown;
  headers?: Record<string, string>;
  /** The rule that allows it, and how the refusal names it. */
  rule: () => ReturnType<typeof rule>;
  names: () => string;
  allowed: number;
}

const rows: Row[] = [
  {
    what: 'list providers',
    method: 'GET',
    path: () => '/providers',
    rule: () => rule(['list'], ['providers']),
    names: () => 'list providers',
    allowed: 200,
  },
  {
    what: 'get a provider',
    method: 'GET',
    path: () => `/providers/${bed.provider}`,
    rule: () => rule(['get'], ['providers'], [bed.provider]),
    names: () => `get providers "${bed.provider}"`,
    allowed: 200,
  },
  {
    what: 'list integrations',
    method: 'GET',
    path: () => '/integrations',
    rule: () => rule(['list'], ['integrations']),
    names: () => 'list integrations',
    allowed: 200,
  },
  {
    what: 'get an integration',
    method: 'GET',
    path: () => '/integrations/crm',
    rule: () => rule(['get'], ['integrations'], ['crm']),
    names: () => 'get integrations "crm"',
    allowed: 200,
  },
  {
    what: 'import a connection',
    method: 'POST',
    path: () => '/connections',
    body: () => ({ provider_config_key: 'crm', connection_id: 'imported', credentials: { type: 'OAUTH2', access_token: 'imported-at' } }),
    rule: () => rule(['create'], ['connections'], [objectName('crm', 'imported')]),
    names: () => `create connections "${objectName('crm', 'imported')}"`,
    allowed: 201,
  },
  {
    what: 'list connections',
    method: 'GET',
    path: () => '/connections',
    rule: () => rule(['list'], ['connections']),
    names: () => 'list connections',
    allowed: 200,
  },
  {
    what: 'fetch a connection with its credentials',
    method: 'GET',
    path: () => '/connections/c1?provider_config_key=crm',
    rule: () => rule(['get'], ['connections/credentials'], [objectName('crm', 'c1')]),
    names: () => `get connections/credentials "${objectName('crm', 'c1')}"`,
    allowed: 200,
  },
  {
    what: 'update metadata',
    method: 'PATCH',
    path: () => '/connection/c1/metadata?provider_config_key=crm',
    body: () => ({ team: 'billing' }),
    rule: () => rule(['update'], ['connections'], [objectName('crm', 'c1')]),
    names: () => `update connections "${objectName('crm', 'c1')}"`,
    allowed: 200,
  },
  {
    what: 'replace metadata of several connections',
    method: 'POST',
    path: () => '/connections/metadata',
    body: () => ({ provider_config_key: 'crm', connection_id: ['c1', 'c2'], metadata: { tier: 'gold' } }),
    rule: () => rule(['update'], ['connections'], [objectName('crm', 'c1'), objectName('crm', 'c2')]),
    names: () => `update connections "${objectName('crm', 'c1')}"`,
    allowed: 200,
  },
  {
    what: 'delete a connection',
    method: 'DELETE',
    path: () => '/connections/to-delete?provider_config_key=crm',
    rule: () => rule(['delete'], ['connections'], [objectName('crm', 'to-delete')]),
    names: () => `delete connections "${objectName('crm', 'to-delete')}"`,
    allowed: 200,
  },
  {
    what: 'create a Connect session',
    method: 'POST',
    path: () => '/connect/sessions',
    body: () => ({ end_user: { id: 'u-1' } }),
    rule: () => rule(['create'], ['connectsessions']),
    names: () => 'create connectsessions',
    allowed: 201,
  },
  {
    what: 'list the operation log',
    method: 'GET',
    path: () => '/logs',
    rule: () => rule(['list'], ['operationlogs']),
    names: () => 'list operationlogs',
    allowed: 200,
  },
  {
    what: 'call the provider through the proxy',
    method: 'GET',
    path: () => '/proxy/v1/me',
    headers: { 'connection-id': 'c1', 'provider-config-key': 'crm' },
    rule: () => rule(['create'], ['connections/proxy'], [objectName('crm', 'c1')]),
    names: () => `create connections/proxy "${objectName('crm', 'c1')}"`,
    allowed: 200,
  },
];

describe('each route, refused without its right and served with exactly it', () => {
  it.each(rows.map((r) => [r.what, r] as const))('%s', async (_what, row) => {
    const { sa, token } = await workload();
    const call = () => bed.call(token, row.method, row.path(), { body: row.body?.(), headers: row.headers });

    const refused = await call();
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('forbidden');
    expect(refused.body.error.message).toContain(`${sa.username} may not ${row.names()}`);
    expect(refused.body.error.message).toContain(`in namespace "${bed.namespace}"`);
    expect(refused.body.error.message).toContain('kubectl auth can-i');

    await grant(bed.kc, bed.namespace, sa, [row.rule()]);
    // The refusal is cached for seconds: move past it.
    bed.advance(11_000);
    const served = await call();
    expect({ status: served.status, body: served.body }).toMatchObject({ status: row.allowed });
    if (row.what.startsWith('fetch')) expect(served.body.credentials.access_token).toBe('at-crm-c1');
    if (row.what.startsWith('call the provider')) {
      expect(served.headers.get('x-upstream')).toBe('yes');
      expect(served.body.headers.authorization).toBe('Bearer at-crm-c1');
    }
  });

  it('never answers a refresh token to a ServiceAccount, whatever its rights', async () => {
    const { sa, token } = await workload();
    await grant(bed.kc, bed.namespace, sa, [rule(['get'], ['connections/credentials'])]);
    const res = await bed.call(token, 'GET', '/connections/c1?provider_config_key=crm&refresh_token=true');
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('refresh_token_not_served');
    const plain = await bed.call(token, 'GET', '/connections/c1?provider_config_key=crm');
    expect(plain.status).toBe(200);
    expect(JSON.stringify(plain.body)).not.toContain('rt-crm-c1');
  });
});

describe('Roles that name Connections or one Integration', () => {
  it('a Role naming one Connection reaches it and not its neighbour', async () => {
    const { token, sa } = await workload();
    await grant(bed.kc, bed.namespace, sa, [rule(['get'], ['connections/credentials'], [objectName('crm', 'c2')])]);
    expect((await bed.call(token, 'GET', '/connections/c2?provider_config_key=crm')).status).toBe(200);
    const other = await bed.call(token, 'GET', '/connections/c3?provider_config_key=crm');
    expect(other.status).toBe(403);
    expect(other.body.error.message).toContain(`get connections/credentials "${objectName('crm', 'c3')}"`);
    expect(other.body.error.message).toContain('or get integrations/connectioncredentials "crm"');
  });

  it("a Role on one Integration's subresources reaches every connection of it, and none of another", async () => {
    const { token, sa } = await workload();
    await grant(bed.kc, bed.namespace, sa, [
      rule(['get'], ['integrations/connectioncredentials'], ['crm']),
      rule(['create'], ['integrations/connectionproxy'], ['crm']),
      rule(['list'], ['integrations/connections'], ['crm']),
    ]);
    expect((await bed.call(token, 'GET', '/connections/c1?provider_config_key=crm')).status).toBe(200);
    expect((await bed.call(token, 'GET', '/connections/c3?provider_config_key=crm')).status).toBe(200);
    const proxied = await bed.call(token, 'GET', '/proxy/v1/me', { headers: { 'connection-id': 'c3', 'provider-config-key': 'crm' } });
    expect(proxied.status).toBe(200);
    expect(proxied.body.headers.authorization).toBe('Bearer at-crm-c3');
    const listed = await bed.call(token, 'GET', '/connections?integrationId=crm');
    expect(listed.status).toBe(200);
    expect(listed.body.connections.every((c: { provider_config_key: string }) => c.provider_config_key === 'crm')).toBe(true);

    expect((await bed.call(token, 'GET', '/connections/m1?provider_config_key=mail')).status).toBe(403);
    expect(
      (await bed.call(token, 'GET', '/proxy/v1/me', { headers: { 'connection-id': 'm1', 'provider-config-key': 'mail' } })).status,
    ).toBe(403);
    // Unfiltered, the list needs the namespace-wide right.
    expect((await bed.call(token, 'GET', '/connections')).status).toBe(403);
  });

  it("the shipped reader's rights do not include credentials", async () => {
    const { token, sa } = await workload();
    // What charts/latchkey's latchkey-connection-reader grants.
    await grant(bed.kc, bed.namespace, sa, [rule(['get', 'list'], ['connections', 'integrations', 'providers'])]);
    expect((await bed.call(token, 'GET', '/connections')).status).toBe(200);
    expect((await bed.call(token, 'GET', '/connections/c1?provider_config_key=crm')).status).toBe(403);
  });
});

describe('the namespace a token works in', () => {
  it("a ServiceAccount of the Environment's namespace needs no header", async () => {
    const { token, sa } = await workload();
    await grant(bed.kc, bed.namespace, sa, [rule(['list'], ['connections'])]);
    expect((await bed.call(token, 'GET', '/connections')).status).toBe(200);
  });

  it("another namespace's ServiceAccount names the Environment's namespace and needs a RoleBinding there", async () => {
    const { token, sa } = await workload(bed.appNamespace);
    // Its own namespace has no Environment.
    const own = await bed.call(token, 'GET', '/connections');
    expect(own.status).toBe(403);
    expect(own.body.error.code).toBe('no_environment');
    expect(own.body.error.message).toContain('Latchkey-Namespace');

    const named = { 'latchkey-namespace': bed.namespace };
    const refused = await bed.call(token, 'GET', '/connections/c1?provider_config_key=crm', { headers: named });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain(`${sa.username} may not get connections/credentials`);
    expect(refused.body.error.message).toContain(`in namespace "${bed.namespace}"`);

    // A Role in its own namespace grants nothing in the Environment's.
    await grant(bed.kc, bed.appNamespace, sa, [rule(['get'], ['connections/credentials'])]);
    bed.advance(11_000);
    expect((await bed.call(token, 'GET', '/connections/c1?provider_config_key=crm', { headers: named })).status).toBe(403);

    await grant(bed.kc, bed.namespace, sa, [rule(['get'], ['connections/credentials'])]);
    bed.advance(11_000);
    const served = await bed.call(token, 'GET', '/connections/c1?provider_config_key=crm', { headers: named });
    expect(served.status).toBe(200);
    expect(served.body.credentials.access_token).toBe('at-crm-c1');
  });

  it('a header that is no namespace name is a 400', async () => {
    const { token } = await workload();
    const res = await bed.call(token, 'GET', '/connections', { headers: { 'latchkey-namespace': 'Not/A Namespace' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_namespace');
  });
});

describe('refused tokens', () => {
  let sa: TestServiceAccount;

  beforeAll(async () => {
    sa = await createServiceAccount(bed.kc, bed.namespace, 'refusals');
    await grant(bed.kc, bed.namespace, sa, [rule(['list'], ['connections'])]);
  });

  it('a token for another audience is a 401', async () => {
    const token = await requestToken(bed.kc, sa, { audiences: ['https://kubernetes.default.svc.cluster.local'] });
    const res = await bed.call(token, 'GET', '/connections');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_token');
    expect(res.body.error.message).toContain('"latchkey"');
    expect(JSON.stringify(res.body)).not.toContain(token);
  });

  it('an expired token is a 401', async () => {
    const res = await bed.call(expiredToken(sa), 'GET', '/connections');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_token');
  });

  it("a deleted ServiceAccount's token works until the TokenReview's cache bound, then is a 401", async () => {
    const gone = await createServiceAccount(bed.kc, bed.namespace, 'deleted-later');
    await grant(bed.kc, bed.namespace, gone, [rule(['list'], ['connections'])]);
    const token = await requestToken(bed.kc, gone);
    expect((await bed.call(token, 'GET', '/connections')).status).toBe(200);
    const before = bed.calls.tokenReviews;
    await bed.kc.makeApiClient(CoreV1Api).deleteNamespacedServiceAccount({ namespace: bed.namespace, name: gone.name });
    // Within the bound (60 s by default), the cached review still answers, without asking again.
    bed.advance(59_000);
    expect((await bed.call(token, 'GET', '/connections')).status).toBe(200);
    expect(bed.calls.tokenReviews).toBe(before);
    // Past it, the token is reviewed again and refused. The API server keeps a successful token
    // authentication itself for up to 10 s: each attempt moves past our bound again until it answers.
    const res = await eventually(
      async () => {
        bed.advance(61_000);
        const r = await bed.call(token, 'GET', '/connections');
        return r.status === 401 ? r : undefined;
      },
      30_000,
      1_000,
    );
    expect(res.body.error.code).toBe('invalid_token');
    expect(bed.calls.tokenReviews).toBeGreaterThan(before);
  });

  it('a token that is no JWT and no secret key is the secret key check’s 401', async () => {
    const res = await bed.call('eyJ.not-a.token', 'GET', '/connections');
    expect(res.status).toBe(401);
  });

  it('the secret key keeps working beside tokens, without any review', async () => {
    const before = { ...bed.calls };
    const res = await bed.call(bed.env.secretKey, 'GET', '/connections/c1?provider_config_key=crm');
    expect(res.status).toBe(200);
    expect(bed.calls).toEqual(before);
  });
});

describe('the review caches', () => {
  it('a request whose reviews are cached makes no API call', async () => {
    const { token, sa } = await workload();
    await grant(bed.kc, bed.namespace, sa, [rule(['get'], ['connections/credentials'])]);
    expect((await bed.call(token, 'GET', '/connections/c1?provider_config_key=crm')).status).toBe(200);
    const after = { ...bed.calls };
    for (let i = 0; i < 5; i++) expect((await bed.call(token, 'GET', '/connections/c1?provider_config_key=crm')).status).toBe(200);
    expect(bed.calls).toEqual(after);
  });

  it('a revoked RoleBinding still allows for the SubjectAccessReview bound (10 s), then is refused', async () => {
    const { token, sa } = await workload();
    const role = await grant(bed.kc, bed.namespace, sa, [rule(['get'], ['connections/credentials'])]);
    expect((await bed.call(token, 'GET', '/connections/c2?provider_config_key=crm')).status).toBe(200);
    await revoke(bed.kc, bed.namespace, role);
    await eventually(
      async () => !(await canI(bed.kc, sa, { namespace: bed.namespace, verb: 'get', resource: 'connections', subresource: 'credentials' })),
    );
    bed.advance(9_000);
    expect((await bed.call(token, 'GET', '/connections/c2?provider_config_key=crm')).status).toBe(200);
    bed.advance(2_000);
    expect((await bed.call(token, 'GET', '/connections/c2?provider_config_key=crm')).status).toBe(403);
  });

  it("a TokenReview is kept no longer than the token's own lifetime", async () => {
    const { sa } = await workload();
    await grant(bed.kc, bed.namespace, sa, [rule(['list'], ['connections'])]);
    // Ten minutes, the shortest the TokenRequest API issues; the server's clock is moved past its exp
    // (the API server's is not, so it still accepts it: a second review is the cache's doing).
    const token = await requestToken(bed.kc, sa, { expirationSeconds: 600 });
    const local = await startWorkloadBedlessListener(3600);
    try {
      expect((await local.call(token)).status).toBe(200);
      expect(local.calls.tokenReviews).toBe(1);
      local.advance(590_000);
      expect((await local.call(token)).status).toBe(200);
      expect(local.calls.tokenReviews).toBe(1);
      // Past its exp, by the server's clock, the review is not kept at all: each request asks (once).
      local.advance(20_000);
      expect((await local.call(token)).status).toBe(200);
      expect(local.calls.tokenReviews).toBe(2);
      expect((await local.call(token)).status).toBe(200);
      expect(local.calls.tokenReviews).toBe(3);
    } finally {
      await local.close();
    }
  });

  it('holds at most the configured number of entries (least recently used out)', async () => {
    const local = await startWorkloadBedlessListener(60, 2);
    try {
      const tokens: string[] = [];
      for (let i = 0; i < 3; i++) {
        const { sa, token } = await workload();
        await grant(bed.kc, bed.namespace, sa, [rule(['list'], ['connections'])]);
        tokens.push(token);
      }
      for (const t of tokens) expect((await local.call(t)).status).toBe(200);
      expect(local.calls.tokenReviews).toBe(3);
      // The third pushed the first out; the third is still held.
      expect((await local.call(tokens[2]!)).status).toBe(200);
      expect(local.calls.tokenReviews).toBe(3);
      expect((await local.call(tokens[0]!)).status).toBe(200);
      expect(local.calls.tokenReviews).toBe(4);
    } finally {
      await local.close();
    }
  });
});

describe('the operation log', () => {
  it('records a refusal once per decision, with who and what, never the token', async () => {
    const { token, sa } = await workload();
    expect((await bed.call(token, 'GET', '/connections/m1?provider_config_key=mail')).status).toBe(403);
    // Answered from the cache: not recorded again.
    expect((await bed.call(token, 'GET', '/connections/m1?provider_config_key=mail')).status).toBe(403);
    await bed.ctx.oplog!.flush();
    const logs = await eventually(async () => {
      const res = await bed.call(bed.env.secretKey, 'GET', '/logs?operation=access');
      const mine = (res.body.logs as Array<{ message?: string; messages?: string[] }>).filter((e) =>
        JSON.stringify(e).includes(sa.username),
      );
      return mine.length ? mine : undefined;
    });
    expect(logs).toHaveLength(1);
    const text = JSON.stringify(logs[0]);
    expect(logs[0]!.messages![0]).toContain(`may not get connections/credentials "${objectName('mail', 'm1')}"`);
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.split('.')[2]!);
  });
});

/**
 * A second listener on the bed's store with its own caches (TokenReview ceiling `ceilingSeconds`,
 * `entries` per cache) and its own movable clock: `call` lists connections with a token.
 */
async function startWorkloadBedlessListener(ceilingSeconds: number, entries = 10_000) {
  const { createServer } = await import('node:http');
  const { createRequestListener } = await import('../../src/http/app.js');
  const { KubeAccessReviews } = await import('../../src/k8s/access-reviews.js');
  let offset = 0;
  const calls = { tokenReviews: 0, accessReviews: 0 };
  const real = new KubeAccessReviews(bed.kc);
  const ctx = {
    ...bed.ctx,
    clock: { now: () => Date.now() + offset },
    config: { ...bed.ctx.config, tokenReviewTtlSeconds: ceilingSeconds, reviewCacheEntries: entries },
  };
  const server = createServer(
    createRequestListener(ctx, {
      accessReviews: countingReviews(real, calls),
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    calls,
    advance: (ms: number) => (offset += ms),
    call: async (token: string) => {
      const res = await fetch(`${url}/connections`, { headers: { authorization: `Bearer ${token}` } });
      return { status: res.status, body: (await res.json()) as unknown };
    },
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await real.close();
    },
  };
}
