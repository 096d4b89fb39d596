import { randomBytes } from 'node:crypto';
import { CoreV1Api, type CoreV1Event, type KubeConfig } from './kubernetes-client.js';
import { makeBoundedApiClient } from './client.js';
import { API_VERSION, CONNECTIONS, type ConnectionResource } from './resources.js';

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
 * points to (`kubectl get event <log_id> -n <namespace>`, or `kubectl describe connection`).
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
    const namespace = connection.metadata.namespace!;
    const name = `${connection.metadata.name}.${randomBytes(8).toString('hex')}`;
    const at = new Date(this.now()).toISOString();
    const body: CoreV1Event = {
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: API_VERSION,
        kind: CONNECTIONS.kind,
        name: connection.metadata.name,
        namespace,
        uid: connection.metadata.uid,
        resourceVersion: connection.metadata.resourceVersion,
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
