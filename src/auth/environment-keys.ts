import { createHash, timingSafeEqual } from 'node:crypto';
import type { KubeStore } from '../k8s/store.js';
import { ENVIRONMENT_SECRET_KEYS, type EnvironmentResource } from '../k8s/resources.js';

export interface ResolvedEnvironment {
  namespace: string;
  name: string;
  resource: EnvironmentResource;
}

/**
 * Finds the Environment an API secret key belongs to. Keys are indexed by their SHA-256 digest
 * (rebuilt when an Environment or a watched Secret changes) and the digests are compared in
 * constant time, so neither lookup nor comparison reveals anything about a stored key.
 */
export class EnvironmentKeys {
  private index: Map<string, { namespace: string; name: string }> | undefined;

  constructor(private readonly store: KubeStore) {
    const invalidate = () => (this.index = undefined);
    store.environments.onChange(invalidate);
    store.referencedSecrets.onChange(invalidate);
  }

  resolve(secretKey: string): ResolvedEnvironment | undefined {
    const digest = sha256(secretKey);
    const hit = this.getIndex().get(digest.toString('hex'));
    if (!hit) return undefined;
    const resource = this.primaryEnvironment(hit.namespace);
    if (!resource || resource.metadata.name !== hit.name) return undefined;
    const stored = this.store.readSecretValue(hit.namespace, resource.spec.secretRef.name, ENVIRONMENT_SECRET_KEYS.secretKey);
    if (stored === undefined || !timingSafeEqual(sha256(stored), digest)) return undefined;
    return { namespace: hit.namespace, name: hit.name, resource };
  }

  /** The Environment that counts in a namespace: the oldest one (others are reported as duplicates). */
  primaryEnvironment(namespace: string): EnvironmentResource | undefined {
    return primaryOf(this.store.listEnvironments(namespace));
  }

  private getIndex(): Map<string, { namespace: string; name: string }> {
    if (this.index) return this.index;
    const index = new Map<string, { namespace: string; name: string }>();
    const byNamespace = new Map<string, EnvironmentResource[]>();
    for (const env of this.store.listEnvironments()) {
      const ns = env.metadata.namespace!;
      byNamespace.set(ns, [...(byNamespace.get(ns) ?? []), env]);
    }
    for (const [namespace, envs] of byNamespace) {
      const env = primaryOf(envs)!;
      const key = this.store.readSecretValue(namespace, env.spec.secretRef.name, ENVIRONMENT_SECRET_KEYS.secretKey);
      if (key) index.set(sha256(key).toString('hex'), { namespace, name: env.metadata.name });
    }
    this.index = index;
    return index;
  }
}

export function primaryOf(envs: EnvironmentResource[]): EnvironmentResource | undefined {
  return [...envs].sort(
    (a, b) =>
      String(a.metadata.creationTimestamp).localeCompare(String(b.metadata.creationTimestamp)) ||
      a.metadata.name.localeCompare(b.metadata.name),
  )[0];
}

function sha256(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}
