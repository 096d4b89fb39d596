/** Replacing or merging the metadata of connections (`/connections/metadata`, `/connection/{id}/metadata`). */
import { ConnectionStatusWriter } from '../domain/connection-status-writers.js';
import { LatchkeyError } from '../domain/errors.js';
import type { Clock } from '../domain/clock.js';
import type { ConnectionStore, StoredConnection } from '../k8s/store.js';
import { unknownConnection } from './errors.js';

export type MetadataMode = 'replace' | 'merge';

/**
 * Checks every connection exists first (nothing is written when one is unknown), then updates each:
 * its metadata replaced or merged (shallow), and `updated_at` in its status.
 */
export async function updateMetadata(
  deps: { connections: ConnectionStore; clock: Clock },
  namespace: string,
  integrationId: string,
  connectionIds: string[],
  metadata: Record<string, unknown>,
  mode: MetadataMode,
): Promise<StoredConnection[]> {
  const found = await Promise.all(
    connectionIds.map(async (id) => [id, await deps.connections.findConnection(namespace, integrationId, id)] as const),
  );
  const unknown = found.filter(([, c]) => !c).map(([id]) => id);
  if (unknown.length === 1) throw unknownConnection(unknown[0]!, integrationId);
  if (unknown.length > 1) {
    throw new LatchkeyError(
      'not_found',
      'unknown_connection',
      `No connections ${unknown.map((u) => `"${u}"`).join(', ')} for integration "${integrationId}"; nothing was updated`,
      { errors: unknown.map((id) => ({ message: `unknown connection ${id}`, code: 'unknown_connection' })) },
    );
  }
  const now = new Date(deps.clock.now()).toISOString();
  return Promise.all(
    found.map(async ([, c]) => {
      const name = c!.resource.metadata.name;
      await deps.connections.updateConnection(namespace, name, (cur) => ({
        ...cur,
        spec: { ...cur.spec, metadata: mode === 'replace' ? metadata : { ...(cur.spec.metadata ?? {}), ...metadata } },
      }));
      const resource = await deps.connections.updateConnectionStatus(namespace, name, ConnectionStatusWriter.Metadata, (s) => ({
        ...s,
        updatedAt: now,
      }));
      return { ...c!, resource };
    }),
  );
}
