/**
 * What counts as "the API server is unavailable" (503 `api_unavailable`, retry later) and what the
 * readiness endpoints answer from the caches' state. The errors are built the way undici and
 * client-node build them; the fault test (test/faults/api-server-restart.test.ts) meets the real ones.
 */
import { ApiException } from '@kubernetes/client-node';
import { isApiUnavailable } from '../../src/k8s/errors.js';
import { readiness } from '../../src/k8s/readiness.js';

const fetchFailed = (code: string) => new TypeError('fetch failed', { cause: Object.assign(new Error(`connect ${code}`), { code }) });
const apiError = (code: number, message: string) =>
  new ApiException(code, message, JSON.stringify({ kind: 'Status', status: 'Failure', message, code }), {});

it('takes network failures, our 10 s bound and the API server saying so as unavailable', () => {
  expect(isApiUnavailable(fetchFailed('ECONNREFUSED'))).toBe(true);
  expect(isApiUnavailable(fetchFailed('ECONNRESET'))).toBe(true);
  expect(isApiUnavailable(fetchFailed('UND_ERR_SOCKET'))).toBe(true);
  expect(isApiUnavailable(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))).toBe(true);
  expect(isApiUnavailable(apiError(503, 'the server is currently unable to handle the request'))).toBe(true);
  expect(isApiUnavailable(apiError(504, 'Timeout: request did not complete within requested timeout'))).toBe(true);
  expect(isApiUnavailable(apiError(429, 'too many requests'))).toBe(true);
  expect(isApiUnavailable(apiError(500, 'etcdserver: request timed out'))).toBe(true);
});

it('leaves answers about the request itself, and our own bugs, alone', () => {
  expect(isApiUnavailable(apiError(404, 'not found'))).toBe(false);
  expect(isApiUnavailable(apiError(409, 'conflict'))).toBe(false);
  expect(isApiUnavailable(apiError(422, 'invalid'))).toBe(false);
  expect(isApiUnavailable(apiError(500, 'Internal error occurred: admission webhook denied'))).toBe(false);
  expect(isApiUnavailable(new TypeError("Cannot read properties of undefined (reading 'spec')"))).toBe(false);
  expect(isApiUnavailable(undefined)).toBe(false);
});

it('answers starting before the first list, stale while a watch is down, ready when the caches follow', () => {
  expect(readiness({ hasSynced: false, isFresh: false })).toBe('starting');
  expect(readiness({ hasSynced: true, isFresh: false })).toBe('stale');
  expect(readiness({ hasSynced: true, isFresh: true })).toBe('ready');
});
