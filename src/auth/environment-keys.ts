import { hash } from 'node:crypto';
import type { CatalogStore } from '../k8s/store.js';
import { ENVIRONMENT_SECRET_KEYS, type EnvironmentResource } from '../k8s/resources.js';
import { primaryOf } from '../k8s/primary-environment.js';
import { secretKeyWeakness } from './secret-key-strength.js';
import type { AccessCheck } from './service-account-auth.js';

export interface ResolvedEnvironment {
  namespace: string;
  name: string;
  resource: EnvironmentResource;
  /**
   * Set when a Kubernetes token, not the secret key, came with the request: every right the request
   * needs (src/http/access-table.ts) is asked of RBAC before it is served.
   */
  serviceAccount?: ServiceAccountCaller;
}

/**
 * A request authenticated by a Kubernetes token. Each call answers undefined when the review caches
 * decide it already (no promise on the path of a cached request), else a promise that resolves when
 * RBAC allows every check, or rejects with the 401/403.
 */
export interface ServiceAccountCaller {
  /** The token's review alone (a 401 when refused). */
  authenticate(): Promise<void> | undefined;
  authorize(checks: AccessCheck[]): Promise<void> | undefined;
}

/**
 * Finds the Environment an API secret key belongs to. Keys are indexed by their SHA-256 digest
 * (rebuilt when an Environment or a watched Secret changes): the lookup compares digests, never
 * keys, and how long comparing a guess's digest takes says nothing about a stored key.
 *
 * A key is refused when it is weak (see secret-key-strength.ts) or when the Environments of two
 * namespaces hold the same one: it would be ambiguous which namespace a caller means, so neither
 * gets it until one changes (their Environments say so in a condition).
 */
interface IndexEntry {
  namespace: string;
  name: string;
  resource: EnvironmentResource;
  weak: boolean;
}

export class EnvironmentKeys {
  private index: Map<string, IndexEntry[]> | undefined;

  constructor(private readonly catalog: CatalogStore) {
    const invalidate = () => (this.index = undefined);
    catalog.environments.onChange(invalidate);
    catalog.referencedSecrets.onChange(invalidate);
  }

  resolve(secretKey: string): ResolvedEnvironment | undefined {
    const hits = this.getIndex().get(sha256Hex(secretKey));
    if (!hits || hits.length !== 1) return undefined;
    const hit = hits[0]!;
    // The index holds what the stored key's checks need (its digest, whether it is weak), computed
    // when the Environment or its Secret last changed, not on every request of the hot path.
    if (hit.weak) return undefined;
    return { namespace: hit.namespace, name: hit.name, resource: hit.resource };
  }

  /**
   * How many other namespaces' Environments hold the same secret key as this namespace's. Computed
   * afresh: a reconcile may run from the very informer event that has not reached our invalidation yet.
   */
  sharedWith(namespace: string): number {
    this.index = undefined;
    for (const hits of this.getIndex().values()) {
      if (hits.some((h) => h.namespace === namespace)) return hits.length - 1;
    }
    return 0;
  }

  /** The Environment that counts in a namespace: the oldest one (others are reported as duplicates). */
  primaryEnvironment(namespace: string): EnvironmentResource | undefined {
    return primaryOf(this.catalog.listEnvironments(namespace));
  }

  private getIndex(): Map<string, IndexEntry[]> {
    if (this.index) return this.index;
    const index = new Map<string, IndexEntry[]>();
    const byNamespace = new Map<string, EnvironmentResource[]>();
    for (const env of this.catalog.listEnvironments()) {
      const ns = env.metadata.namespace!;
      byNamespace.set(ns, [...(byNamespace.get(ns) ?? []), env]);
    }
    for (const [namespace, envs] of byNamespace) {
      const env = primaryOf(envs)!;
      const key = this.catalog.readSecretValue(namespace, env.spec.secretRef.name, ENVIRONMENT_SECRET_KEYS.secretKey);
      if (!key) continue;
      const hex = sha256Hex(key);
      const entry = { namespace, name: env.metadata.name, resource: env, weak: secretKeyWeakness(key) !== undefined };
      index.set(hex, [...(index.get(hex) ?? []), entry]);
    }
    this.index = index;
    return index;
  }
}

/** One-shot: a `createHash` object per request cost several times the digest itself on the fetch path. */
function sha256Hex(s: string): string {
  return hash('sha256', s, 'hex');
}
