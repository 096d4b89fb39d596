import { createHash } from 'node:crypto';
import { CoreV1Api, type KubeConfig, type V1ConfigMap, type V1Secret } from './kubernetes-client.js';
import { makeBoundedApiClient } from './client.js';
import { isConflict, isNotFound, readOrUndefined } from './errors.js';

/** Label on the small objects that make an authorization flow's `state` single-use. */
export const FLOW_MARKER_LABEL = 'latchkey.dev/flow-marker';
/** Label on the Secrets holding an OAuth 1.0a request token secret between redirect and callback. */
export const FLOW_SECRET_LABEL = 'latchkey.dev/flow-secret';
const EXPIRES_AT = 'latchkey.dev/expires-at';

/**
 * Cluster-side records of end-user authorization flows, so a flow can finish on any replica:
 *
 * - a *marker* ConfigMap created when a callback consumes a flow's state, or when a Connect session
 *   completes a connection (src/connect/session-use.ts). Its name is derived from the flow ID (or the
 *   session's key), so the API server's AlreadyExists answer makes a second use (a replay) fail;
 * - an OAuth 1.0a request token secret, kept in a Secret from the redirect to the callback and deleted
 *   when the callback takes it;
 * - an account choice the end user has yet to make (src/connect/account-choice.ts): the new tokens and
 *   the accounts found, in a Secret (one per session and integration) deleted when the choice is made.
 *
 * Both carry their expiry (the session's) and are removed by {@link sweepExpired} after it.
 */
export class FlowRecords {
  private readonly core: CoreV1Api;

  constructor(
    kc: KubeConfig,
    private readonly fieldManager = 'latchkey',
  ) {
    this.core = makeBoundedApiClient(kc, CoreV1Api);
  }

  /** Records that flow `flowId` was used. Returns false when it had been used already. */
  async markUsed(namespace: string, flowId: string, expiresAtMs: number): Promise<boolean> {
    const body: V1ConfigMap = {
      metadata: {
        name: objectName('latchkey-flow', flowId),
        namespace,
        labels: { [FLOW_MARKER_LABEL]: 'used' },
        annotations: { [EXPIRES_AT]: new Date(expiresAtMs).toISOString() },
      },
    };
    try {
      await this.core.createNamespacedConfigMap({ namespace, body, fieldManager: this.fieldManager });
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }

  /** Whether `flowId` was marked used (and its marker not swept yet). */
  async isUsed(namespace: string, flowId: string): Promise<boolean> {
    try {
      await this.core.readNamespacedConfigMap({ namespace, name: objectName('latchkey-flow', flowId) });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Takes back a mark whose use did not happen after all (nothing was saved), so it can be used again. */
  async unmarkUsed(namespace: string, flowId: string): Promise<void> {
    try {
      await this.core.deleteNamespacedConfigMap({ namespace, name: objectName('latchkey-flow', flowId) });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  async putRequestSecret(
    namespace: string,
    flowId: string,
    temporary: { token: string; tokenSecret: string },
    expiresAtMs: number,
  ): Promise<void> {
    const body: V1Secret = {
      metadata: {
        name: objectName('latchkey-oauth1', flowId),
        namespace,
        labels: { [FLOW_SECRET_LABEL]: 'true' },
        annotations: { [EXPIRES_AT]: new Date(expiresAtMs).toISOString() },
      },
      type: 'Opaque',
      stringData: { token: temporary.token, tokenSecret: temporary.tokenSecret },
    };
    await this.core.createNamespacedSecret({ namespace, body, fieldManager: this.fieldManager });
  }

  /** Reads and deletes the request token (and secret) of a flow; undefined when it is gone (used or expired). */
  async takeRequestSecret(namespace: string, flowId: string): Promise<{ token: string; tokenSecret: string } | undefined> {
    const name = objectName('latchkey-oauth1', flowId);
    let secret: V1Secret;
    try {
      secret = await this.core.readNamespacedSecret({ namespace, name });
      // Deleting with the uid as precondition: of two concurrent callbacks only one deletes it.
      await this.core.deleteNamespacedSecret({ namespace, name, body: { preconditions: { uid: secret.metadata!.uid! } } });
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return undefined;
      throw err;
    }
    const decode = (v: string | undefined) => (v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8'));
    const token = decode(secret.data?.token);
    const tokenSecret = decode(secret.data?.tokenSecret);
    return token === undefined || tokenSecret === undefined ? undefined : { token, tokenSecret };
  }

  /** Keeps a pending account choice (JSON) under `key`, replacing an earlier one of the same key. */
  async putPendingChoice(namespace: string, key: string, json: string, expiresAtMs: number): Promise<void> {
    const name = objectName('latchkey-choice', key);
    const body: V1Secret = {
      metadata: {
        name,
        namespace,
        labels: { [FLOW_SECRET_LABEL]: 'account-choice' },
        annotations: { [EXPIRES_AT]: new Date(expiresAtMs).toISOString() },
      },
      type: 'Opaque',
      stringData: { 'choice.json': json },
    };
    try {
      await this.core.createNamespacedSecret({ namespace, body, fieldManager: this.fieldManager });
    } catch (err) {
      if (!isConflict(err)) throw err;
      await this.core.replaceNamespacedSecret({ namespace, name, body, fieldManager: this.fieldManager });
    }
  }

  /** A pending account choice and the uid of its Secret; undefined when there is none (made or swept). */
  async readPendingChoice(namespace: string, key: string): Promise<{ uid: string; json: string; expiresAtMs: number } | undefined> {
    return readOrUndefined(async () => {
      const secret = await this.core.readNamespacedSecret({ namespace, name: objectName('latchkey-choice', key) });
      const json = secret.data?.['choice.json'];
      if (json === undefined) return undefined;
      return {
        uid: secret.metadata!.uid!,
        json: Buffer.from(json, 'base64').toString('utf8'),
        expiresAtMs: Date.parse(secret.metadata?.annotations?.[EXPIRES_AT] ?? '') || 0,
      };
    });
  }

  /** Deletes the pending choice read with `uid`: of two concurrent takers only one gets true. */
  async takePendingChoice(namespace: string, key: string, uid: string): Promise<boolean> {
    try {
      await this.core.deleteNamespacedSecret({ namespace, name: objectName('latchkey-choice', key), body: { preconditions: { uid } } });
      return true;
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return false;
      throw err;
    }
  }

  /** Deletes markers, request-token and pending-choice Secrets whose session has expired. Returns how many. */
  async sweepExpired(namespaces: string[], nowMs: number): Promise<number> {
    let removed = 0;
    const scopes = namespaces.length ? namespaces : [undefined];
    for (const ns of scopes) {
      const markers = ns
        ? await this.core.listNamespacedConfigMap({ namespace: ns, labelSelector: FLOW_MARKER_LABEL })
        : await this.core.listConfigMapForAllNamespaces({ labelSelector: FLOW_MARKER_LABEL });
      const secrets = ns
        ? await this.core.listNamespacedSecret({ namespace: ns, labelSelector: FLOW_SECRET_LABEL })
        : await this.core.listSecretForAllNamespaces({ labelSelector: FLOW_SECRET_LABEL });
      const expired = (meta: { annotations?: Record<string, string> } | undefined) => {
        const expires = Date.parse(meta?.annotations?.[EXPIRES_AT] ?? '');
        return Number.isFinite(expires) && expires <= nowMs;
      };
      const deletions = [
        ...markers.items
          .filter((i) => expired(i.metadata))
          .map((i) => () => this.core.deleteNamespacedConfigMap({ namespace: i.metadata!.namespace!, name: i.metadata!.name! })),
        ...secrets.items
          .filter((i) => expired(i.metadata))
          .map((i) => () => this.core.deleteNamespacedSecret({ namespace: i.metadata!.namespace!, name: i.metadata!.name! })),
      ];
      for (const del of deletions) {
        try {
          await del();
          removed++;
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
    }
    return removed;
  }
}

function objectName(prefix: string, flowId: string): string {
  return `${prefix}-${createHash('sha256').update(flowId).digest('hex').slice(0, 40)}`;
}
