import { LatchkeyError } from '../domain/errors.js';

/** No such connection of this integration in the environment (404 `unknown_connection`). */
export function unknownConnection(connectionId: string, integrationId: string): LatchkeyError {
  return new LatchkeyError(
    'not_found',
    'unknown_connection',
    `No connection "${connectionId}" for integration "${integrationId}" in this environment`,
  );
}
