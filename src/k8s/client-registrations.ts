/**
 * OAuth clients Latchkey registered for an Integration at authorization servers it discovered
 * (RFC 7591 dynamic client registration, MCP_OAUTH2): one per Integration and authorization server,
 * kept in a Secret owned by the Integration (deleted with it), so every replica and every end user of
 * the Integration use the same client instead of registering one per connection. Writes are
 * compare-and-swap on the Secret; reads go to the API server (the Secret is read at a flow's start
 * and callback only, not cached).
 */
import { createHash } from 'node:crypto';
import { compareAndSwap } from './cas.js';
import { makeBoundedApiClient } from './client.js';
import { isConflict, readOrUndefined } from './errors.js';
import { CoreV1Api, type KubeConfig, type V1Secret } from './kubernetes-client.js';
import { API_VERSION, type IntegrationResource } from './resources.js';

/** The Secret's type; its keys are `client.<first 16 hex of the SHA-256 of the issuer>`. */
export const REGISTRATIONS_SECRET_TYPE = 'latchkey.dev/client-registrations';

/** A client an authorization server registered (what its RFC 7591 answer said that Latchkey uses). */
export interface ClientRegistration {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  tokenEndpointAuthMethod: 'none' | 'client_secret_post' | 'client_secret_basic';
  /** The redirect URIs registered: a flow with another one registers again. */
  redirectUris: string[];
  registeredAt: string;
}

/** What a mode uses (src/modes/auth-mode.ts `RedirectDeps`). */
export interface ClientRegistrationStore {
  read(namespace: string, integration: IntegrationResource, issuer: string): Promise<ClientRegistration | undefined>;
  save(namespace: string, integration: IntegrationResource, registration: ClientRegistration): Promise<void>;
  /** The authorization server no longer knows the client (invalid_client): the next flow registers again. */
  forget(namespace: string, integration: IntegrationResource, issuer: string): Promise<void>;
}

export function registrationsSecretName(integration: string): string {
  return `latchkey-clients-${createHash('sha256').update(integration).digest('hex').slice(0, 16)}`;
}

function keyOf(issuer: string): string {
  return `client.${createHash('sha256').update(issuer).digest('hex').slice(0, 16)}`;
}

export class ClientRegistrations implements ClientRegistrationStore {
  private readonly core: CoreV1Api;

  constructor(
    kc: KubeConfig,
    private readonly fieldManager = 'latchkey',
  ) {
    this.core = makeBoundedApiClient(kc, CoreV1Api);
  }

  async read(namespace: string, integration: IntegrationResource, issuer: string): Promise<ClientRegistration | undefined> {
    const secret = await this.readSecret(namespace, integration.metadata.name);
    const value = secret?.data?.[keyOf(issuer)];
    if (value === undefined) return undefined;
    try {
      const parsed = JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as ClientRegistration;
      return parsed.issuer === issuer && typeof parsed.clientId === 'string' ? parsed : undefined;
    } catch {
      return undefined;
    }
  }

  async save(namespace: string, integration: IntegrationResource, registration: ClientRegistration): Promise<void> {
    const value = Buffer.from(JSON.stringify(registration), 'utf8').toString('base64');
    await this.update(namespace, integration, (data) => ({ ...data, [keyOf(registration.issuer)]: value }));
  }

  async forget(namespace: string, integration: IntegrationResource, issuer: string): Promise<void> {
    await this.update(namespace, integration, (data) => {
      if (!(keyOf(issuer) in data)) return undefined;
      const next = { ...data };
      delete next[keyOf(issuer)];
      return next;
    });
  }

  private async readSecret(namespace: string, integration: string): Promise<V1Secret | undefined> {
    return readOrUndefined(() => this.core.readNamespacedSecret({ namespace, name: registrationsSecretName(integration) }));
  }

  /** Changes the Secret's data (created on first use, owned by the Integration); `change` undefined: nothing to write. */
  private async update(
    namespace: string,
    integration: IntegrationResource,
    change: (data: Record<string, string>) => Record<string, string> | undefined,
  ): Promise<void> {
    const name = registrationsSecretName(integration.metadata.name);
    for (let attempt = 0; attempt < 5; attempt++) {
      const existing = await this.readSecret(namespace, integration.metadata.name);
      if (existing) {
        await compareAndSwap<V1Secret>({
          readCached: () => existing,
          readFresh: () => this.core.readNamespacedSecret({ namespace, name }),
          mutate: (current) => {
            const data = change(current.data ?? {});
            return data === undefined ? undefined : { ...current, data };
          },
          write: (next) => this.core.replaceNamespacedSecret({ namespace, name, body: next, fieldManager: this.fieldManager }),
          what: `Secret ${namespace}/${name}`,
        });
        return;
      }
      const data = change({});
      if (data === undefined) return;
      const body: V1Secret = {
        metadata: {
          name,
          namespace,
          labels: { 'app.kubernetes.io/managed-by': 'latchkey', 'latchkey.dev/integration': integration.metadata.name },
          ownerReferences: integration.metadata.uid
            ? [{ apiVersion: API_VERSION, kind: 'Integration', name: integration.metadata.name, uid: integration.metadata.uid }]
            : [],
        },
        type: REGISTRATIONS_SECRET_TYPE,
        data,
      };
      try {
        await this.core.createNamespacedSecret({ namespace, body, fieldManager: this.fieldManager });
        return;
      } catch (err) {
        // Another replica created it first: change theirs.
        if (!isConflict(err)) throw err;
      }
    }
  }
}
