import type { CoreV1Api } from './kubernetes-client.js';
import { isNotFound } from './errors.js';

/**
 * Whether a Secret exists at all, read from the API server (not a cache). Used to tell a person that a
 * Secret an Integration or Environment refers to exists but lacks the `latchkey.dev/watch=true` label.
 * Undefined when the answer is unknown (no permission, API server unreachable).
 */
export async function secretExists(core: CoreV1Api, namespace: string, name: string): Promise<boolean | undefined> {
  try {
    await core.readNamespacedSecret({ namespace, name });
    return true;
  } catch (err) {
    return isNotFound(err) ? false : undefined;
  }
}
