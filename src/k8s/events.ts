import { randomBytes } from 'node:crypto';
import { CoreV1Api, type CoreV1Event, type KubeConfig } from './kubernetes-client.js';
import { makeBoundedApiClient } from './client.js';
import { API_VERSION, CONNECTIONS, INTEGRATIONS, type ConnectionResource, type IntegrationResource } from './resources.js';

export interface EventInput {
  type: 'Normal' | 'Warning';
  /** UpperCamelCase reason, e.g. RefreshFailed. */
  reason: string;
  /** Human-readable; must never contain a token, key or password. */
  message: string;
  /** What was being done, e.g. Refresh. */
  action?: string;
}

const MAX_MESSAGE = 1024;

/**
 * Kubernetes Events about Connections: the log records that a connection's `errors[].log_id`
 * points to (`kubectl get event <log_id> -n <namespace>`, or `kubectl describe connection`); and
 * about Integrations, for what their connections' refreshes tell of the provider.
 */
export class ConnectionEvents {
  private readonly core: CoreV1Api;

  constructor(
    kc: KubeConfig,
    private readonly component = 'latchkey',
    private readonly now: () => number = Date.now,
  ) {
    this.core = makeBoundedApiClient(kc, CoreV1Api);
  }

  /** Records an Event on the Connection and returns the Event's name (used as `log_id`). */
  async record(connection: ConnectionResource, input: EventInput): Promise<string> {
    return this.create(CONNECTIONS.kind, connection, input);
  }

  /** Records an Event on the Integration and returns the Event's name. */
  async recordIntegration(integration: IntegrationResource, input: EventInput): Promise<string> {
    return this.create(INTEGRATIONS.kind, integration, input);
  }

  private async create(kind: string, object: ConnectionResource | IntegrationResource, input: EventInput): Promise<string> {
    const namespace = object.metadata.namespace!;
    const name = `${object.metadata.name}.${randomBytes(8).toString('hex')}`;
    const at = new Date(this.now()).toISOString();
    const body: CoreV1Event = {
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: API_VERSION,
        kind,
        name: object.metadata.name,
        namespace,
        uid: object.metadata.uid,
        resourceVersion: object.metadata.resourceVersion,
      },
      type: input.type,
      reason: input.reason,
      action: input.action,
      message: input.message.slice(0, MAX_MESSAGE),
      source: { component: this.component },
      reportingComponent: `latchkey.dev/${this.component}`,
      reportingInstance: this.component,
      firstTimestamp: at as unknown as Date,
      lastTimestamp: at as unknown as Date,
      count: 1,
    };
    await this.core.createNamespacedEvent({ namespace, body });
    return name;
  }

  /** Reads an Event back (for tests and for the UI that shows a log entry). */
  async get(namespace: string, name: string): Promise<CoreV1Event> {
    return this.core.readNamespacedEvent({ namespace, name });
  }
}
