/** What both imports (`POST /connections`, the deprecated `POST /connection`) share: the end user sent, the log entry. */
import type { z } from 'zod';
import type { EndUserSpec } from '../../../../k8s/resources.js';
import type { StoredConnection } from '../../../../k8s/store.js';
import type { EndUserInput } from '../../schemas/common.js';
import type { RestDeps } from '../deps.js';

export function endUserSpec(u: z.infer<typeof EndUserInput> | undefined, extraTags?: Record<string, string>): EndUserSpec | undefined {
  if (!u) return undefined;
  const tags = { ...(u.tags ?? {}), ...(extraTags ?? {}) };
  return {
    id: u.id,
    ...(u.email !== undefined ? { email: u.email } : {}),
    ...(u.display_name !== undefined ? { displayName: u.display_name } : {}),
    ...(Object.keys(tags).length ? { tags } : {}),
  };
}

export function logImport(deps: RestDeps, conn: StoredConnection, created: boolean): void {
  const r = conn.resource;
  deps.oplog?.record({
    namespace: r.metadata.namespace!,
    operation: 'import',
    step: created ? 'create' : 'replace',
    outcome: 'success',
    integration: r.spec.integration,
    connectionId: r.spec.connectionId,
    connection: { name: r.metadata.name, uid: r.metadata.uid, created },
    endUserId: r.spec.endUser?.id,
    messages: [created ? `Connection imported (${conn.credentials.type})` : `Credentials replaced by an import (${conn.credentials.type})`],
  });
}
