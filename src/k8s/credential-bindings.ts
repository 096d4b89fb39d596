/**
 * What the binding controller reads and writes in Kubernetes: CredentialBindings (cached by an
 * informer in every controller replica: they are few, and each replica picks those whose connection
 * it owns), the labels of a binding's namespace, the bound Secrets (read by name, never listed or
 * cached: the controller's rights on application namespaces stay get/create/update), binding status,
 * and the pod template annotation of a rollout restart.
 */
import type { KubeConfig, KubernetesListObject, V1Namespace, V1Secret } from './kubernetes-client.js';
import type { Logger } from '../platform/log.js';
import { CustomObjectsApi } from './kubernetes-client.js';
import { makeBoundedApiClient } from './client.js';
import { ResourceCache } from './cache.js';
import { compareAndSwap } from './cas.js';
import { isConflict, readOrUndefined } from './errors.js';
import { ResilientInformer } from './informer.js';
import { apiPath, KubeJsonApi } from './json-api.js';
import {
  ANNOTATIONS,
  API_VERSION,
  BOUND_SECRET_TYPE,
  CREDENTIAL_BINDINGS,
  GROUP,
  LABELS,
  VERSION,
  type CredentialBindingResource,
  type CredentialBindingStatus,
} from './resources.js';

/** What a bound Secret should hold. */
export interface BoundSecretContent {
  data: Record<string, string>;
  /** The token's expiry (RFC 3339), as the Secret's annotation; undefined: none (no expiry, or emptied). */
  expiresAt: string | undefined;
  /** `namespace/integration/connectionId`. */
  connection: string;
}

/** How a bound Secret write went. */
export type BoundSecretWrite = 'created' | 'updated' | 'unchanged' | 'absent' | 'not-owned';

export class CredentialBindings {
  readonly cache: ResourceCache<CredentialBindingResource>;
  private readonly json: KubeJsonApi;
  private readonly fieldManager: string;

  constructor(kc: KubeConfig, opts: { namespaces: string[]; logger: Logger; fieldManager?: string }) {
    this.json = new KubeJsonApi(kc);
    this.fieldManager = opts.fieldManager ?? 'latchkey';
    const custom = makeBoundedApiClient(kc, CustomObjectsApi);
    const logger = opts.logger.child({ component: 'credential-bindings' });
    const informer = (namespace: string | undefined) =>
      new ResilientInformer<CredentialBindingResource>({
        kc,
        path: namespace ? apiPath(`/apis/${GROUP}/${VERSION}/namespaces`, namespace, CREDENTIAL_BINDINGS.plural) : bindingsPath,
        logger,
        listPage: async (limit, _continue) =>
          (namespace
            ? await custom.listNamespacedCustomObject({
                group: GROUP,
                version: VERSION,
                namespace,
                plural: CREDENTIAL_BINDINGS.plural,
                limit,
                _continue,
              })
            : await custom.listClusterCustomObject({
                group: GROUP,
                version: VERSION,
                plural: CREDENTIAL_BINDINGS.plural,
                limit,
                _continue,
              })) as KubernetesListObject<CredentialBindingResource>,
      });
    this.cache = new ResourceCache(opts.namespaces.length ? opts.namespaces.map(informer) : [informer(undefined)]);
  }

  start(): Promise<void> {
    return this.cache.start();
  }

  async stop(): Promise<void> {
    await this.cache.stop();
    await this.json.close();
  }

  get(namespace: string, name: string): CredentialBindingResource | undefined {
    return this.cache.get(name, namespace);
  }

  list(): CredentialBindingResource[] {
    return this.cache.list();
  }

  /** A namespace's labels, read from the API server (undefined: no such namespace). */
  async namespaceLabels(name: string): Promise<Record<string, string> | undefined> {
    return readOrUndefined(async () => {
      const ns = await this.json.get<V1Namespace>(apiPath('/api/v1/namespaces', name));
      return ns.metadata?.labels ?? {};
    });
  }

  /**
   * Makes the binding's Secret hold `content` (created owned by the binding, or updated), unless a
   * Secret of that name exists that is not the binding's. `create: false`: only an existing Secret of
   * the binding's is written (emptying never creates one).
   */
  async writeSecret(
    binding: CredentialBindingResource,
    name: string,
    content: BoundSecretContent,
    opts: { create: boolean },
  ): Promise<BoundSecretWrite> {
    const namespace = binding.metadata.namespace!;
    const path = apiPath('/api/v1/namespaces', namespace, 'secrets', name);
    const current = await this.readSecret(namespace, name);
    if (!current) {
      if (!opts.create) return 'absent';
      try {
        await this.json.call('POST', apiPath('/api/v1/namespaces', namespace, 'secrets'), {
          body: boundSecret(binding, name, content),
          query: { fieldManager: this.fieldManager },
        });
        return 'created';
      } catch (err) {
        // Someone else's, created meanwhile: judged on the next reconcile.
        if (isConflict(err)) return 'not-owned';
        throw err;
      }
    }
    if (!ownedBy(current, binding)) return 'not-owned';
    let changed = false;
    await compareAndSwap<V1Secret>({
      what: `bound secret ${namespace}/${name}`,
      readCached: () => current,
      readFresh: () => this.json.get<V1Secret>(path),
      mutate: (s) => {
        if (!ownedBy(s, binding)) throw new Error(`secret ${namespace}/${name} is no longer the binding's`);
        const next = boundSecret(binding, name, content);
        if (sameContent(s, next)) return undefined;
        changed = true;
        // Others' labels and annotations stay; ours are set (the expiry removed once there is none).
        const annotations = { ...s.metadata?.annotations, ...next.metadata!.annotations };
        if (!content.expiresAt) delete annotations[ANNOTATIONS.expiresAt];
        return {
          ...s,
          data: next.data,
          metadata: { ...s.metadata, labels: { ...s.metadata?.labels, ...next.metadata!.labels }, annotations },
        };
      },
      write: (s) => this.json.put<V1Secret>(path, s, { fieldManager: this.fieldManager }),
    });
    return changed ? 'updated' : 'unchanged';
  }

  /** The bound Secret's current data, decoded (undefined: none, or not the binding's). */
  async readBoundData(binding: CredentialBindingResource, name: string): Promise<Record<string, string> | undefined> {
    const s = await this.readSecret(binding.metadata.namespace!, name);
    if (!s || !ownedBy(s, binding)) return undefined;
    return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
  }

  /** Compare-and-swap write of a binding's status subresource. */
  async updateStatus(
    namespace: string,
    name: string,
    mutate: (current: CredentialBindingStatus, binding: CredentialBindingResource) => CredentialBindingStatus | undefined,
  ): Promise<CredentialBindingResource> {
    const path = apiPath(`/apis/${GROUP}/${VERSION}/namespaces`, namespace, CREDENTIAL_BINDINGS.plural, name);
    const written = await compareAndSwap<CredentialBindingResource>({
      what: `credential binding status ${namespace}/${name}`,
      readCached: () => this.cache.get(name, namespace),
      readFresh: () => this.json.get<CredentialBindingResource>(path),
      mutate: (b) => {
        const status = mutate(structuredClone(b.status ?? {}), b);
        return status === undefined ? undefined : { ...b, status };
      },
      write: (b) => this.json.put<CredentialBindingResource>(`${path}/status`, b, { fieldManager: this.fieldManager }),
    });
    this.cache.remember(written);
    return written;
  }

  /**
   * Restarts a Deployment or StatefulSet of `namespace` as `kubectl rollout restart` does: a pod template
   * annotation with the time, so its controller rolls new pods (a merge patch of that annotation alone).
   */
  async restartWorkload(namespace: string, kind: 'Deployment' | 'StatefulSet', name: string, at: string): Promise<void> {
    const plural = kind === 'Deployment' ? 'deployments' : 'statefulsets';
    await this.json.call('PATCH', apiPath('/apis/apps/v1/namespaces', namespace, plural, name), {
      body: { spec: { template: { metadata: { annotations: { [ANNOTATIONS.restartedAt]: at } } } } },
      contentType: 'application/merge-patch+json',
      query: { fieldManager: this.fieldManager },
    });
  }

  private async readSecret(namespace: string, name: string): Promise<V1Secret | undefined> {
    return readOrUndefined(() => this.json.get<V1Secret>(apiPath('/api/v1/namespaces', namespace, 'secrets', name)));
  }
}

const bindingsPath = `/apis/${GROUP}/${VERSION}/${CREDENTIAL_BINDINGS.plural}`;

function ownedBy(secret: V1Secret, binding: CredentialBindingResource): boolean {
  return (secret.metadata?.ownerReferences ?? []).some((r) => r.uid === binding.metadata.uid && r.controller === true);
}

/** The bound Secret: owned by the binding (deleted with it), labelled as Latchkey's, its expiry annotated. */
function boundSecret(binding: CredentialBindingResource, name: string, content: BoundSecretContent): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: BOUND_SECRET_TYPE,
    metadata: {
      name,
      namespace: binding.metadata.namespace,
      labels: { [LABELS.managedBy]: LABELS.managedByValue, [LABELS.credentialBinding]: binding.metadata.name },
      annotations: {
        [ANNOTATIONS.boundConnection]: content.connection,
        ...(content.expiresAt ? { [ANNOTATIONS.expiresAt]: content.expiresAt } : {}),
      },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: CREDENTIAL_BINDINGS.kind,
          name: binding.metadata.name,
          uid: binding.metadata.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    data: Object.fromEntries(Object.entries(content.data).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')])),
  };
}

function sameContent(current: V1Secret, next: V1Secret): boolean {
  const a = current.data ?? {};
  const b = next.data ?? {};
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (a[k] !== b[k]) return false;
  const ann = (s: V1Secret) => ({
    expires: s.metadata?.annotations?.[ANNOTATIONS.expiresAt],
    connection: s.metadata?.annotations?.[ANNOTATIONS.boundConnection],
  });
  return JSON.stringify(ann(current)) === JSON.stringify(ann(next));
}
