/**
 * What the end user types before an install page (APP, CUSTOM, INSTALL_PLUGIN): the Provider's
 * connection configuration without the keys the install callback fills. A reconnect keeps the stored
 * configuration, so it cannot point the connection at another account.
 */
import { checkConnectionConfig, configFields } from '../catalog/connection-config.js';
import type { FlowState } from '../auth/flow-state.js';
import type { IntegrationResource, ProviderResource, ProviderSpec } from '../k8s/resources.js';
import type { AppContext } from '../context/app-context.js';
import { logAttempt } from './flow-log.js';
import type { OpenSession } from './session.js';

/** What starting an install flow (app or plugin) takes: the state it seals is the base plus its mode and configuration. */
export interface InstallStart {
  session: OpenSession;
  integration: IntegrationResource;
  provider: ProviderResource;
  base: Omit<FlowState, 'mode' | 'connectionConfig'>;
  rawConfig: unknown;
}

/** The Provider's rules without the keys the flow fills. */
export function userFacingSpec(spec: ProviderSpec, supplied: ReadonlySet<string>): ProviderSpec {
  return { ...spec, connectionConfiguration: configFields(spec).filter((f) => !supplied.has(f.name)) };
}

/** The stored configuration on reconnect, else the checked input; string values only, flow-filled keys left out. */
export async function installUserConfig(
  deps: Pick<AppContext, 'connections'>,
  session: OpenSession,
  spec: ProviderSpec,
  rawConfig: unknown,
  supplied: ReadonlySet<string>,
): Promise<Record<string, string>> {
  const r = session.claims.reconnect;
  const stored = r
    ? (await deps.connections.findConnection(session.namespace, r.integration, r.connectionId))?.resource.spec.connectionConfig
    : undefined;
  const config =
    stored ??
    checkConnectionConfig(userFacingSpec(spec, supplied), (rawConfig ?? {}) as Record<string, unknown>, {
      path: 'connectionConfig',
      strict: true,
    });
  return Object.fromEntries(Object.entries(config).flatMap(([k, v]) => (typeof v === 'string' && !supplied.has(k) ? [[k, v]] : [])));
}

/** The start of an install flow, in the operation log: where the end user is sent (no query: it carries the state). */
export function logInstallStart(deps: AppContext, input: InstallStart, url: URL, what: string): void {
  const { session, integration } = input;
  logAttempt(deps, {
    namespace: session.namespace,
    integration: integration.metadata.name,
    endUserId: session.claims.endUser?.id,
    reconnect: session.claims.reconnect,
    step: 'start',
    outcome: 'success',
    messages: [`Redirecting the end user to install ${what} at ${url.origin}${url.pathname}`],
  });
}
