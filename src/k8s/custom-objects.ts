import type { CustomObjectsApi } from './kubernetes-client.js';
import { alreadyExists, isConflict, isNotFound } from './errors.js';
import { GROUP, VERSION } from './resources.js';

/** Creates a namespaced custom object; a name already taken is an `already_exists` error ({@link alreadyExists}) naming `what`. */
export async function createCustomObject<T extends object>(
  custom: CustomObjectsApi,
  target: { namespace: string; plural: string; fieldManager: string },
  body: T,
  what: string,
): Promise<T> {
  try {
    return (await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, ...target, body })) as T;
  } catch (err) {
    if (isConflict(err)) throw alreadyExists(what);
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
