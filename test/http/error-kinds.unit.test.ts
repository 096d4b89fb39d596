/**
 * The errors of the lower layers are LatchkeyErrors (src/domain/errors.ts): each has a kind the HTTP
 * layer maps to a status and a stable code its catchers recognise it by; a subclass only where it
 * carries data its catchers read. No other error type is declared in src/.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '../../dev/repo-root.js';
import { CredentialExchangeError } from '../../src/modes/shared/credential-exchange.js';
import { JwtMintError } from '../../src/modes/shared/jwt-minting.js';
import { connectionNotFound, RefreshError } from '../../src/auth/refresh/errors.js';
import { MissingTemplateValueError } from '../../src/catalog/template.js';
import { EgressRefusedError } from '../../src/egress/guard.js';
import { hasCode, LatchkeyError } from '../../src/domain/errors.js';
import { statusOf } from '../../src/http/errors.js';
import { alreadyExists, conflictRetriesExhausted, isConflictRetriesExhausted, objectNotFound } from '../../src/k8s/errors.js';
import { boundAnswer } from '../../src/egress/bounded-body.js';
import { providerUnreachable } from '../../src/proxy/upstream.js';
import { oauth1Failed } from '../../src/modes/shared/oauth1.js';

it.each([
  [
    new MissingTemplateValueError(['subdomain']),
    'invalid_input',
    'missing_connection_config',
    400,
    'connection configuration is missing "subdomain"',
  ],
  [alreadyExists('connection c1'), 'conflict', 'already_exists', 409, 'connection c1 already exists'],
  [objectNotFound('integration i1'), 'not_found', 'not_found', 404, 'integration i1 not found'],
  [
    conflictRetriesExhausted('connection ns/c1', Object.assign(new Error('conflict'), { code: 409 })),
    'unavailable',
    'busy',
    503,
    'connection ns/c1: too many concurrent updates; try again',
  ],
  [
    providerUnreachable(new Error('connect ECONNREFUSED')),
    'upstream',
    'provider_unreachable',
    502,
    'provider unreachable: connect ECONNREFUSED',
  ],
  [
    new RefreshError('reauthorization required: token endpoint answered 400 invalid_grant', {
      permanent: true,
      code: 'reauthorization_required',
    }),
    'reauthorization_required',
    'reauthorization_required',
    424,
    'reauthorization required: token endpoint answered 400 invalid_grant',
  ],
  [
    new RefreshError('provider unavailable: token endpoint answered 503', {
      permanent: false,
      code: 'provider_unavailable',
      providerError: { status: 503 },
    }),
    'upstream',
    'provider_unavailable',
    502,
    'provider unavailable: token endpoint answered 503',
  ],
  [
    new RefreshError('provider unavailable: token request timed out', { permanent: false, code: 'provider_unavailable' }),
    'unavailable',
    'provider_unavailable',
    503,
    'provider unavailable: token request timed out',
  ],
  [
    new RefreshError('another replica is refreshing this connection; try again', { permanent: false, code: 'refresh_in_progress' }),
    'unavailable',
    'refresh_in_progress',
    503,
    'another replica is refreshing this connection; try again',
  ],
  [
    new RefreshError("the provider refused the integration's client", { permanent: true, code: 'integration_misconfigured' }),
    'unavailable',
    'integration_misconfigured',
    503,
    "the provider refused the integration's client",
  ],
  [
    new RefreshError('provider unavailable: too large', { permanent: false, code: 'provider_answer_too_large' }),
    'upstream',
    'provider_answer_too_large',
    502,
    'provider unavailable: too large',
  ],
  [connectionNotFound('github', 'c1'), 'not_found', 'unknown_connection', 404, 'connection c1 of integration github not found'],
  [
    new CredentialExchangeError('rejected', 'the token endpoint refused the credentials (HTTP 401)', 401),
    'invalid_input',
    'invalid_credentials',
    400,
    'the token endpoint refused the credentials (HTTP 401)',
  ],
  [
    new CredentialExchangeError('unavailable', 'the token endpoint answered 503', 503, 2000),
    'upstream',
    'provider_unavailable',
    502,
    'the token endpoint answered 503',
  ],
  [
    new CredentialExchangeError('misconfigured', 'the token endpoint did not answer JSON', 200),
    'unavailable',
    'integration_misconfigured',
    503,
    'the token endpoint did not answer JSON',
  ],
  [
    oauth1Failed('provider answered 401 at /oauth/request_token'),
    'upstream',
    'oauth1_failed',
    502,
    'provider answered 401 at /oauth/request_token',
  ],
  [new JwtMintError('invalid_key', 'The signing key is empty.'), 'invalid_input', 'invalid_credentials', 400, 'The signing key is empty.'],
  [
    new JwtMintError('missing_connection_config', 'a value is missing', ['kid']),
    'invalid_input',
    'missing_connection_config',
    400,
    'a value is missing',
  ],
  [
    new JwtMintError('provider_misconfigured', 'unusable JWT settings'),
    'unavailable',
    'integration_misconfigured',
    503,
    'unusable JWT settings',
  ],
  [
    new EgressRefusedError('db.internal', '10.0.0.5', 'private'),
    'forbidden',
    'EGRESS_REFUSED',
    403,
    'egress refused: db.internal (10.0.0.5) is a private address; only LATCHKEY_EGRESS_ALLOW can allow it',
  ],
])('%s is a LatchkeyError of kind %s, code %s (%d)', (err, kind, code, status, message) => {
  expect(err).toBeInstanceOf(LatchkeyError);
  expect(err).toMatchObject({ kind, code, message });
  expect(statusOf(err)).toBe(status);
});

it('keeps the fields each class adds', () => {
  const refresh = new RefreshError('m', { permanent: false, code: 'provider_unavailable', retryAfterMs: 1500, logId: 'ev1' });
  expect(refresh).toMatchObject({ name: 'RefreshError', permanent: false, retryAfterMs: 1500, logId: 'ev1' });
  expect(new CredentialExchangeError('unavailable', 'm', 429, 3000)).toMatchObject({
    problem: 'unavailable',
    status: 429,
    retryAfterMs: 3000,
  });
  expect(new JwtMintError('missing_connection_config', 'm', ['kid'])).toMatchObject({
    problem: 'missing_connection_config',
    keys: ['kid'],
  });
  expect(new EgressRefusedError('10.0.0.5', '10.0.0.5', 'private')).toMatchObject({ host: '10.0.0.5', addressClass: 'private' });
});

it("tells a write that kept losing to other writers from a service's own busy answer", () => {
  const conflict = Object.assign(new Error('conflict'), { code: 409 });
  expect(isConflictRetriesExhausted(conflictRetriesExhausted('connection ns/c1', conflict))).toBe(true);
  expect(
    isConflictRetriesExhausted(new LatchkeyError('unavailable', 'busy', 'Connection "c1" is being created concurrently; try again')),
  ).toBe(false);
  expect(hasCode(alreadyExists('x'), 'already_exists')).toBe(true);
  expect(hasCode(new Error('already_exists'), 'already_exists')).toBe(false);
});

it('answers a provider answer over the limit as provider_answer_too_large (502)', () => {
  let err: unknown;
  try {
    boundAnswer(new Response('{}', { headers: { 'content-length': '999' } }), 100);
  } catch (e) {
    err = e;
  }
  expect(err).toMatchObject({
    kind: 'upstream',
    code: 'provider_answer_too_large',
    message: "The provider's answer is larger than 100 bytes; it was not read.",
  });
  expect(statusOf(err)).toBe(502);
});

/**
 * One error type: a class that extends Error (or any of its built-in subclasses) is declared only in
 * src/domain/errors.ts; everything else extends LatchkeyError. src/browser is the dashboard's and
 * the Connect page's code, a separate program run by the browser that imports nothing of the server.
 */
const OWN_ERROR_BASE = /\bclass\s+\w+(\s*<[^>]*>)?\s+extends\s+(Error|TypeError|RangeError|SyntaxError|AggregateError)\b/;
const ALLOWED = [/^src\/domain\/errors\.ts$/, /^src\/browser\//];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return full.endsWith('.ts') ? [full] : [];
  });
}

it('declares no error class in src/ but LatchkeyError (and its subclasses)', () => {
  const found = sourceFiles(join(REPO_ROOT, 'src')).flatMap((full) => {
    const file = relative(REPO_ROOT, full).split('\\').join('/');
    if (ALLOWED.some((a) => a.test(file))) return [];
    return readFileSync(full, 'utf8')
      .split('\n')
      .flatMap((text, i) => (OWN_ERROR_BASE.test(text) ? [`${file}:${i + 1}: ${text.trim()}`] : []));
  });
  expect(found).toEqual([]);
});

it('recognizes an error class of its own, and not a LatchkeyError subclass', () => {
  expect(OWN_ERROR_BASE.test('export class RefreshError extends Error {')).toBe(true);
  expect(OWN_ERROR_BASE.test('class ApiFailure extends TypeError {')).toBe(true);
  expect(OWN_ERROR_BASE.test('export class RefreshError extends LatchkeyError {')).toBe(false);
  expect(OWN_ERROR_BASE.test('export class TerminalError extends LatchkeyError {')).toBe(false);
});
