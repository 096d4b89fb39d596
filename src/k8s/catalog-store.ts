import type { V1Secret } from './kubernetes-client.js';
import type { ResourceCache } from './cache.js';
import { secretExists } from './secret-presence.js';
import { parseClientCertificate, TLS_SECRET_KEYS, validAt, type ClientCertificateCheck } from '../domain/client-certificate.js';
import type { EnvironmentResource, IntegrationResource, ProviderResource } from './resources.js';
import type { StoreCaches } from './store-caches.js';

/** What a reader may do with one kind's cache: look up, list, and hear of changes. */
export type CacheView<T> = Pick<ResourceCache<T & { metadata?: object }>, 'get' | 'list' | 'onChange'>;

/**
 * The catalog as the informer caches hold it, read-only: Providers (by name or alias), Integrations,
 * Environments and the Secrets they refer to. Writes go through ./catalog-status.ts (status and
 * annotations) and ./integration-writes.ts (Integrations and their client Secret).
 */
export class CatalogStore {
  /** alias -> provider name ({@link getProvider}); undefined after a Provider changed. */
  private providerAliases: Map<string, string> | undefined;

  /** Each Secret object's parsed certificate: the informer replaces the object when the Secret changes. */
  private readonly parsedCertificates = new WeakMap<V1Secret, ClientCertificateCheck>();

  constructor(private readonly caches: StoreCaches) {
    caches.providers.onChange(() => (this.providerAliases = undefined));
  }

  get providers(): CacheView<ProviderResource> {
    return this.caches.providers;
  }

  get integrations(): CacheView<IntegrationResource> {
    return this.caches.integrations;
  }

  get environments(): CacheView<EnvironmentResource> {
    return this.caches.environments;
  }

  /** Secrets that Integrations and Environments refer to (labelled latchkey.dev/watch=true). */
  get referencedSecrets(): CacheView<V1Secret> {
    return this.caches.referencedSecrets;
  }

  /**
   * A Provider by its name, or else by one of its `spec.aliases`. A name always wins over an alias;
   * two Providers claiming one alias: the first by name.
   */
  getProvider(name: string): ProviderResource | undefined {
    return this.caches.providers.get(name) ?? this.providerByAlias(name);
  }

  private providerByAlias(alias: string): ProviderResource | undefined {
    const { providers } = this.caches;
    let target = this.aliasIndex().get(alias);
    let found = target === undefined ? undefined : providers.get(target);
    if (target !== undefined && !found?.spec.aliases?.includes(alias)) {
      // A change the index has not seen yet (a write of ours still in the overlay): build it again.
      this.providerAliases = undefined;
      target = this.aliasIndex().get(alias);
      found = target === undefined ? undefined : providers.get(target);
    }
    return found;
  }

  /** alias -> provider name, built on first use after any Provider change. */
  private aliasIndex(): Map<string, string> {
    if (this.providerAliases) return this.providerAliases;
    const index = new Map<string, string>();
    const providers = this.caches.providers.list().sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    for (const p of providers) for (const a of p.spec?.aliases ?? []) if (!index.has(a)) index.set(a, p.metadata.name);
    return (this.providerAliases = index);
  }

  listProviders(): ProviderResource[] {
    return this.caches.providers.list();
  }

  getIntegration(namespace: string, name: string): IntegrationResource | undefined {
    return this.caches.integrations.get(name, namespace);
  }

  listIntegrations(namespace: string): IntegrationResource[] {
    return this.caches.integrations.list(namespace);
  }

  listEnvironments(namespace?: string): EnvironmentResource[] {
    return this.caches.environments.list(namespace);
  }

  /** A Secret an Integration or Environment refers to (it must carry latchkey.dev/watch=true). */
  getReferencedSecret(namespace: string, name: string): V1Secret | undefined {
    return this.caches.referencedSecrets.get(name, namespace);
  }

  /** Value of one key of a referenced Secret, decoded. */
  readSecretValue(namespace: string, name: string, key: string): string | undefined {
    const data = this.getReferencedSecret(namespace, name)?.data?.[key];
    return data === undefined ? undefined : Buffer.from(data, 'base64').toString('utf8');
  }

  /**
   * The TLS client certificate of an Integration's `clientCertificateRef` Secret (`tls.crt`, `tls.key`),
   * checked at `nowMs`; undefined when the Secret is not in the caches (see {@link secretExists}).
   */
  readClientCertificate(namespace: string, name: string, nowMs: number): ClientCertificateCheck | undefined {
    const secret = this.getReferencedSecret(namespace, name);
    if (!secret) return undefined;
    let parsed = this.parsedCertificates.get(secret);
    if (!parsed) {
      const value = (key: string) => {
        const data = secret.data?.[key];
        return data ? Buffer.from(data, 'base64').toString('utf8') : undefined;
      };
      parsed = parseClientCertificate(value(TLS_SECRET_KEYS.cert), value(TLS_SECRET_KEYS.key));
      this.parsedCertificates.set(secret, parsed);
    }
    return validAt(parsed, nowMs);
  }

  /**
   * Whether a Secret exists at all, asked of the API server (it is not in the caches): tells a person
   * that a Secret an Integration or Environment refers to lacks the watch label. Undefined: unknown.
   */
  secretExists(namespace: string, name: string): Promise<boolean | undefined> {
    return secretExists(this.caches.core, namespace, name);
  }
}
