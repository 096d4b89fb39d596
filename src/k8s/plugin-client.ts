/**
 * What `kubectl latchkey` asks of the API server, as the person running it: their kubeconfig, their
 * context, their RBAC. It reads Connections, their operation logs and CredentialBindings, and writes
 * one annotation (a refresh request). It never reads a Secret.
 */
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from './kubernetes-client.js';
import { loadKubeConfig, makeBoundedApiClient } from './client.js';
import { apiMessage, isNotFound, statusOf } from './errors.js';
import { ANNOTATIONS, CONNECTIONS, GROUP, VERSION, type ConnectionResource } from './resources.js';
import { LatchkeyError, type ErrorKind } from '../domain/errors.js';
import { ENVIRONMENT_PREFIX, type OplogEntry } from '../oplog/entry.js';
import { oplogObjectName, parseOplogEntries } from './oplog-store.js';

/** The CredentialBinding kind (issue 56, part 2): its API is assumed here, its CRD may not be installed. */
export const CREDENTIAL_BINDINGS = { group: GROUP, version: VERSION, plural: 'credentialbindings' } as const;

/** A CredentialBinding as the plugin shows it: whatever its spec and status hold. */
export interface CredentialBindingObject {
  metadata: { name?: string; namespace?: string; creationTimestamp?: string | Date };
  spec?: Record<string, unknown>;
  status?: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> } & Record<string, unknown>;
}

const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const DATA_KEY = 'entries.jsonl';

export interface PluginTarget {
  kubeconfig?: string;
  context?: string;
  /** Explicit namespace (`-n`); otherwise the context's, otherwise `default`. */
  namespace?: string;
}

export class PluginClient {
  readonly namespace: string;
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;

  constructor(
    private readonly kc: KubeConfig,
    namespace: string,
  ) {
    this.namespace = namespace;
    this.custom = makeBoundedApiClient(kc, CustomObjectsApi);
    this.core = makeBoundedApiClient(kc, CoreV1Api);
  }

  /** Loads the kubeconfig as kubectl does (`--kubeconfig`, else KUBECONFIG, else ~/.kube/config), with `--context` and `-n`. */
  static load(target: PluginTarget): PluginClient {
    let kc: KubeConfig;
    try {
      kc = loadKubeConfig(target.kubeconfig);
    } catch (err) {
      const where = target.kubeconfig ?? 'the default kubeconfig';
      throw new LatchkeyError(
        'invalid_input',
        'bad_kubeconfig',
        `cannot read ${where}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    if (target.context) {
      if (!kc.getContextObject(target.context))
        throw new LatchkeyError('invalid_input', 'unknown_context', `context "${target.context}" does not exist in the kubeconfig`);
      kc.setCurrentContext(target.context);
    }
    if (!kc.getCurrentCluster()?.server)
      throw new LatchkeyError('invalid_input', 'no_cluster', 'the kubeconfig names no cluster (is KUBECONFIG set?)');
    const fromContext = kc.getContextObject(kc.getCurrentContext())?.namespace;
    return new PluginClient(kc, target.namespace || fromContext || 'default');
  }

  /** The bearer token the kubeconfig's user presents to the API server, if it uses one (not a client certificate). */
  async bearerToken(): Promise<string | undefined> {
    const opts: { headers: Record<string, string> } = { headers: {} };
    await this.kc.applyToHTTPSOptions(opts);
    const auth = opts.headers.Authorization ?? opts.headers.authorization;
    return auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length) : undefined;
  }

  /** Connections of the namespace (undefined: every namespace), read in pages. */
  async listConnections(namespace: string | undefined): Promise<ConnectionResource[]> {
    return this.list<ConnectionResource>(CONNECTIONS.plural, namespace);
  }

  async getConnection(namespace: string, name: string): Promise<ConnectionResource | undefined> {
    try {
      return (await this.custom.getNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: CONNECTIONS.plural,
        name,
      })) as ConnectionResource;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw asRequestError(err);
    }
  }

  /**
   * Asks the controller that owns the connection to refresh it: a JSON merge patch of one annotation
   * (RBAC: `patch` on `connections`). The value, the time of the request, is what the controller's
   * record names once it has handled it.
   */
  async requestRefresh(namespace: string, name: string, requestedAt: string): Promise<ConnectionResource> {
    try {
      return (await this.custom.patchNamespacedCustomObject(
        {
          group: GROUP,
          version: VERSION,
          namespace,
          plural: CONNECTIONS.plural,
          name,
          body: { metadata: { annotations: { [ANNOTATIONS.refreshRequestedAt]: requestedAt } } },
          fieldManager: 'kubectl-latchkey',
        },
        MERGE_PATCH,
      )) as ConnectionResource;
    } catch (err) {
      throw asRequestError(err);
    }
  }

  /**
   * The connection's operation log: its own ConfigMap (`latchkey-oplog-<connection>`) and its entries
   * in the namespace's ring (attempts recorded before the Connection existed), oldest first.
   */
  async connectionLog(connection: ConnectionResource): Promise<OplogEntry[]> {
    const namespace = connection.metadata.namespace!;
    const [own, ring] = await Promise.all([
      this.logObject(namespace, connection.metadata.name),
      this.logObject(namespace, ENVIRONMENT_PREFIX),
    ]);
    const { integration, connectionId } = connection.spec;
    const entries = [...own, ...ring.filter((e) => e.integration === integration && e.connectionId === connectionId)];
    return entries.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : a.id.localeCompare(b.id)));
  }

  /** CredentialBindings of the namespace (undefined: every namespace), or `installed: false` when the API server does not know the kind. */
  async listBindings(namespace: string | undefined): Promise<{ installed: true; items: CredentialBindingObject[] } | { installed: false }> {
    try {
      return { installed: true, items: await this.list<CredentialBindingObject>(CREDENTIAL_BINDINGS.plural, namespace) };
    } catch (err) {
      if (err instanceof LatchkeyError && err.kind === 'not_found') return { installed: false };
      throw err;
    }
  }

  private async logObject(namespace: string, prefix: string): Promise<OplogEntry[]> {
    try {
      const cm = await this.core.readNamespacedConfigMap({ namespace, name: oplogObjectName(prefix) });
      return parseOplogEntries(cm.data?.[DATA_KEY]);
    } catch (err) {
      if (isNotFound(err)) return [];
      throw asRequestError(err);
    }
  }

  private async list<T>(plural: string, namespace: string | undefined): Promise<T[]> {
    const out: T[] = [];
    let cont: string | undefined;
    try {
      do {
        const page = (
          namespace === undefined
            ? await this.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural, limit: 500, _continue: cont })
            : await this.custom.listNamespacedCustomObject({
                group: GROUP,
                version: VERSION,
                namespace,
                plural,
                limit: 500,
                _continue: cont,
              })
        ) as { items: T[]; metadata?: { continue?: string } };
        out.push(...page.items);
        cont = page.metadata?.continue || undefined;
      } while (cont);
    } catch (err) {
      throw asRequestError(err);
    }
    return out;
  }
}

const KIND_OF_STATUS: Record<number, ErrorKind> = {
  400: 'invalid_input',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
};

/** A refusal or failure of the API server, with its own message (a 403 says which verb on which resource was denied). */
function asRequestError(err: unknown): LatchkeyError {
  const status = statusOf(err);
  return new LatchkeyError(KIND_OF_STATUS[status ?? 0] ?? 'unavailable', `kubernetes_${status ?? 'unreachable'}`, apiMessage(err));
}
