import { LatchkeyError } from '../domain/errors.js';
import type { CustomObjectsApi } from './kubernetes-client.js';
import { isConflict, isNotFound } from './errors.js';
import { GROUP, VERSION } from './resources.js';

/** A create found the object there already (the services turn it into their own answer). */
export class AlreadyExistsError extends LatchkeyError {
  constructor(what: string) {
    super('conflict', 'already_exists', `${what} already exists`);
    this.name = 'AlreadyExistsError';
  }
}

/** A write found no object to write to (the services turn it into their own answer). */
export class NotFoundError extends LatchkeyError {
  constructor(what: string) {
    super('not_found', 'not_found', `${what} not found`);
    this.name = 'NotFoundError';
  }
}

/** Creates a namespaced custom object; a name already taken is an {@link AlreadyExistsError} naming `what`. */
export async function createCustomObject<T extends object>(
  custom: CustomObjectsApi,
  target: { namespace: string; plural: string; fieldManager: string },
  body: T,
  what: string,
): Promise<T> {
  try {
    return (await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, ...target, body })) as T;
  } catch (err) {
    if (isConflict(err)) throw new AlreadyExistsError(what);
    throw err;
  }
}

/**
 * Deletes a namespaced custom object (its dependents in the background), only the one with `uid`
 * when given; false when there was none.
 */
export async function deleteCustomObject(
  custom: CustomObjectsApi,
  target: { namespace: string; plural: string; name: string },
  uid: string | undefined,
): Promise<boolean> {
  try {
    await custom.deleteNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      ...target,
      propagationPolicy: 'Background',
      body: uid ? { preconditions: { uid } } : undefined,
    });
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}
