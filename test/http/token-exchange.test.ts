/**
 * RFC 8693 token exchange at `POST /oauth2/token` (docs/workloads.md#token-exchange): a ServiceAccount
 * token (reviewed by the real API server, authorized by its RBAC as a fetch is) or the Environment's
 * secret key, traded for one connection's provider access token, refreshed first when due, never a
 * refresh token; every error in RFC 6749 §5.2's shape.
 */
import { z } from 'zod';
import { connectionObjectName } from '../../src/k8s/names.js';
import {
  ACCESS_TOKEN_TYPE,
  connectionUrn,
  JWT_TOKEN_TYPE,
  SECRET_KEY_TOKEN_TYPE,
  TOKEN_EXCHANGE_GRANT,
} from '../../src/http/token-exchange.js';
import { createServiceAccount, grant, requestToken, rule, type TestServiceAccount } from '../support/service-accounts.js';
import { startWorkloadBed, type WorkloadBed } from '../support/workload-bed.js';

let bed: WorkloadBed;
let reader: TestServiceAccount;
let readerToken: string;
let tokenCalls = 0;

beforeAll(async () => {
  bed = await startWorkloadBed('token-exchange');
  bed.upstream.on('/token', (_req, res, body) => {
    tokenCalls++;
    const form = new URLSearchParams(body.toString('utf8'));
    if (form.get('grant_type') === 'refresh_token' && form.get('refresh_token') === 'rt-due') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: 'at-refreshed', refresh_token: 'rt-next', token_type: 'Bearer', expires_in: 3600 }));
    } else {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"error":"invalid_grant"}');
    }
  });
  await bed.addConnection('crm', 'c1');
  await bed.addConnection('crm', 'due', {
    type: 'OAUTH2',
    access_token: 'at-stale',
    refresh_token: 'rt-due',
    expires_at: new Date(Date.now() + 20_000).toISOString(),
    raw: {},
  });
  await bed.ctx.connections.createConnection({
    namespace: bed.namespace,
    spec: { integration: 'mail', provider: bed.provider, connectionId: 'key', authMode: 'API_KEY' },
    credentials: { type: 'API_KEY', apiKey: 'k-secret' },
  });
  reader = await createServiceAccount(bed.kc, bed.namespace, 'exchanger');
  await grant(bed.kc, bed.namespace, reader, [
    rule(['get'], ['connections/credentials'], [connectionObjectName('crm', 'c1'), connectionObjectName('crm', 'due')]),
  ]);
  readerToken = await requestToken(bed.kc, reader);
}, 60_000);

afterAll(async () => {
  await bed?.close();
});

const target = (integration: string, connectionId: string, namespace = bed.namespace) =>
  connectionUrn({ namespace, integration, connectionId });

async function exchange(form: Record<string, string>, contentType = 'application/x-www-form-urlencoded') {
  const res = await fetch(`${bed.url}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: contentType.startsWith('application/json') ? JSON.stringify(form) : new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

const withToken = (subjectToken: string, resource: string, extra: Record<string, string> = {}) => ({
  grant_type: TOKEN_EXCHANGE_GRANT,
  subject_token: subjectToken,
  subject_token_type: JWT_TOKEN_TYPE,
  resource,
  ...extra,
});

describe('a ServiceAccount token exchanged for a provider token', () => {
  it("answers RFC 8693's JSON with the connection's access token and no refresh token", async () => {
    const res = await exchange(withToken(readerToken, target('crm', 'c1')));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      access_token: 'at-crm-c1',
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: 'Bearer',
      expires_in: expect.any(Number),
    });
    expect(res.body.expires_in).toBeGreaterThan(3000);
    expect(res.body.expires_in).toBeLessThanOrEqual(3600);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(JSON.stringify(res.body)).not.toContain('rt-crm-c1');
  });

  it('takes the connection in `audience` as well', async () => {
    const { resource, ...rest } = withToken(readerToken, target('crm', 'c1'));
    const res = await exchange({ ...rest, audience: resource });
    expect(res.status).toBe(200);
    expect(res.body.access_token).toBe('at-crm-c1');
  });

  it('refreshes a token that is due before answering it', async () => {
    const before = tokenCalls;
    const res = await exchange(withToken(readerToken, target('crm', 'due')));
    expect(res.status).toBe(200);
    expect(res.body.access_token).toBe('at-refreshed');
    expect(tokenCalls).toBe(before + 1);
    expect(JSON.stringify(res.body)).not.toContain('rt-next');
  });

  it('refuses a connection its RBAC does not allow: unauthorized_client naming the right', async () => {
    await bed.addConnection('crm', 'other');
    const res = await exchange(withToken(readerToken, target('crm', 'other')));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('unauthorized_client');
    expect(res.body.error_description).toContain(`get connections/credentials "${connectionObjectName('crm', 'other')}"`);
  });

  it('refuses a token for another audience: invalid_request', async () => {
    const other = await requestToken(bed.kc, reader, { audiences: ['vault'] });
    const res = await exchange(withToken(other, target('crm', 'c1')));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(JSON.stringify(res.body)).not.toContain(other);
  });
});

describe("the Environment's secret key as the subject token", () => {
  it('exchanges it for a connection of its own namespace', async () => {
    const res = await exchange({ ...withToken(bed.env.secretKey, target('crm', 'c1')), subject_token_type: SECRET_KEY_TOKEN_TYPE });
    expect(res.status).toBe(200);
    expect(res.body.access_token).toBe('at-crm-c1');
  });

  it("refuses another namespace's connection: invalid_target", async () => {
    const res = await exchange({
      ...withToken(bed.env.secretKey, target('crm', 'c1', bed.appNamespace)),
      subject_token_type: SECRET_KEY_TOKEN_TYPE,
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_target');
  });

  it('refuses an unknown key: invalid_request', async () => {
    const res = await exchange({
      ...withToken('sk_not_a_real_key_0123456789abcdef', target('crm', 'c1')),
      subject_token_type: SECRET_KEY_TOKEN_TYPE,
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });
});

describe('errors in RFC 6749 §5.2 shape', () => {
  it.each([
    ['another grant type', { grant_type: 'client_credentials' }, 'unsupported_grant_type'],
    ['no subject token', { subject_token: '' }, 'invalid_request'],
    ['an unknown subject token type', { subject_token_type: 'urn:ietf:params:oauth:token-type:saml2' }, 'invalid_request'],
    ['a delegation', { actor_token: 'x', actor_token_type: JWT_TOKEN_TYPE }, 'invalid_request'],
    ['a scope', { scope: 'repo' }, 'invalid_scope'],
    ['another requested token type', { requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' }, 'invalid_request'],
    ['a target that is no connection URN', { resource: 'https://api.example.com/' }, 'invalid_target'],
  ])('%s', async (_what, change, error) => {
    const res = await exchange({ ...withToken(readerToken, target('crm', 'c1')), ...change });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error, error_description: expect.any(String) });
  });

  it('no target at all: invalid_request', async () => {
    const { resource: _r, ...rest } = withToken(readerToken, target('crm', 'c1'));
    const res = await exchange(rest);
    expect(res.body.error).toBe('invalid_request');
  });

  it('resource and audience naming different connections: invalid_target', async () => {
    const res = await exchange({ ...withToken(readerToken, target('crm', 'c1')), audience: target('crm', 'due') });
    expect(res.body.error).toBe('invalid_target');
  });

  it('an unknown connection: invalid_target', async () => {
    const { sa, token } = await (async () => {
      const sa = await createServiceAccount(bed.kc, bed.namespace, 'exchanger-all');
      await grant(bed.kc, bed.namespace, sa, [rule(['get'], ['connections/credentials'])]);
      return { sa, token: await requestToken(bed.kc, sa) };
    })();
    expect(sa.name).toBe('exchanger-all');
    const res = await exchange(withToken(token, target('crm', 'nope')));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_target');
    // A connection whose credentials hold no access token (an API key).
    const key = await exchange(withToken(token, target('mail', 'key')));
    expect(key.body.error).toBe('invalid_target');
    expect(JSON.stringify(key.body)).not.toContain('k-secret');
  });

  it('a JSON body: invalid_request', async () => {
    const res = await exchange(withToken(readerToken, target('crm', 'c1')), 'application/json');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  it('a GET: 405 with Allow', async () => {
    const res = await fetch(`${bed.url}/oauth2/token`);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });
});

describe('in the OpenAPI document', () => {
  it('documents the form, the answer and the RFC 6749 §5.2 errors, and the answers served fit them', async () => {
    const doc = (await (await fetch(`${bed.url}/openapi.json`)).json()) as any;
    const op = doc.paths['/oauth2/token'].post;
    expect(op.security).toEqual([]);
    const form = op.requestBody.content['application/x-www-form-urlencoded'].schema;
    expect(form.required).toEqual(expect.arrayContaining(['grant_type', 'subject_token', 'subject_token_type']));
    expect(form.properties.grant_type.const).toBe(TOKEN_EXCHANGE_GRANT);
    expect(form.properties.subject_token_type.enum).toEqual([JWT_TOKEN_TYPE, SECRET_KEY_TOKEN_TYPE]);
    expect(Object.keys(form.properties)).toEqual(expect.arrayContaining(['resource', 'audience', 'requested_token_type']));
    // The form a client sends as documented is served.
    expect(z.fromJSONSchema(form).safeParse(withToken(readerToken, target('crm', 'c1'))).success).toBe(true);

    const answer = z.fromJSONSchema(op.responses['200'].content['application/json'].schema);
    const ok = await exchange(withToken(readerToken, target('crm', 'c1')));
    expect(answer.safeParse(ok.body).success).toBe(true);
    expect(answer.safeParse({ ...ok.body, issued_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' }).success).toBe(false);

    expect(op.responses['400'].content['application/json'].schema.$ref).toBe('#/components/schemas/OAuthError');
    const oauthError = z.fromJSONSchema(doc.components.schemas.OAuthError);
    expect(doc.components.schemas.OAuthError.properties.error.enum).toEqual(
      expect.arrayContaining(['invalid_request', 'invalid_target', 'unauthorized_client']),
    );
    for (const [form, error] of [
      [{ ...withToken(readerToken, target('crm', 'c1')), scope: 'x' }, 'invalid_scope'],
      [withToken(readerToken, 'https://api.example.com/'), 'invalid_target'],
      [withToken(readerToken, target('crm', 'other')), 'unauthorized_client'],
    ] as const) {
      const res = await exchange(form);
      expect(res.body.error).toBe(error);
      expect(oauthError.safeParse(res.body).success).toBe(true);
    }
    expect(oauthError.safeParse({ error: { code: 'forbidden', message: 'x' } }).success).toBe(false);
    for (const status of ['405', '429', '503']) expect(op.responses[status].content['application/json'].schema.$ref).toBeDefined();
    // Every REST operation documents the 403 a ServiceAccount's RBAC answers.
    expect(doc.paths['/connections/{connectionId}'].get.responses['403'].description).toContain('verb, resource and namespace');
    expect(Object.keys(doc.components.securitySchemes)).toEqual(['secretKey', 'serviceAccountToken']);
  });
});
