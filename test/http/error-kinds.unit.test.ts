/**
 * The errors of the lower layers are LatchkeyErrors (src/domain/errors.ts): each has a kind the HTTP
 * layer maps to a status and a stable code, and its own class still tells its catchers what it is.
 */
import { MissingTemplateValueError } from '../../src/catalog/template.js';
import { LatchkeyError } from '../../src/domain/errors.js';
import { statusOf } from '../../src/http/errors.js';
import { ConflictRetriesExhausted } from '../../src/k8s/errors.js';
import { AlreadyExistsError, NotFoundError } from '../../src/k8s/store.js';
import { UpstreamNetworkError } from '../../src/proxy/upstream.js';

it.each([
  [
    new MissingTemplateValueError(['subdomain']),
    'invalid_input',
    'missing_connection_config',
    400,
    'connection configuration is missing "subdomain"',
  ],
  [new AlreadyExistsError('connection c1'), 'conflict', 'already_exists', 409, 'connection c1 already exists'],
  [new NotFoundError('integration i1'), 'not_found', 'not_found', 404, 'integration i1 not found'],
  [
    new ConflictRetriesExhausted('connection ns/c1'),
    'unavailable',
    'busy',
    503,
    'connection ns/c1: too many concurrent updates; try again',
  ],
  [
    new UpstreamNetworkError(new Error('connect ECONNREFUSED')),
    'upstream',
    'provider_unreachable',
    502,
    'provider unreachable: connect ECONNREFUSED',
  ],
])('%s is a LatchkeyError of kind %s, code %s (%d)', (err, kind, code, status, message) => {
  expect(err).toBeInstanceOf(LatchkeyError);
  expect(err).toMatchObject({ kind, code, message });
  expect(statusOf(err)).toBe(status);
});
