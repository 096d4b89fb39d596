import { TerminalError } from '../../domain/errors.js';
import { apiMessage, statusOf } from '../../k8s/errors.js';

/**
 * Answers of the API server to a write it refuses for what the write says (400: malformed, 422: the
 * CRD's schema or a CEL rule): the same reconcile writes the same status and is refused again.
 */
const REFUSED_AS_INVALID = new Set([400, 422]);

/**
 * Rethrows a status write's failure; as a {@link TerminalError} when retrying cannot fix it, so the
 * work queue drops the key instead of backing off forever (the object's next change brings it back).
 */
export function terminalIfRefused(err: unknown, what: string): never {
  const status = statusOf(err);
  if (status !== undefined && REFUSED_AS_INVALID.has(status))
    throw new TerminalError('invalid_input', 'status_rejected', `${what}: the API server refused the status write: ${apiMessage(err)}`, {
      cause: err,
    });
  throw err;
}
