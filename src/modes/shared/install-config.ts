/**
 * What the end user types before an install page (APP, CUSTOM, INSTALL_PLUGIN): the Provider's
 * connection configuration without the keys the install callback fills. A reconnect keeps the stored
 * configuration, so it cannot point the connection at another account.
 */
import { checkConnectionConfig, configFields } from '../../catalog/connection-config.js';
import type { ProviderSpec } from '../../k8s/resources.js';
import type { RedirectDeps, RedirectStart } from '../auth-mode.js';

/** The Provider's rules without the keys the flow fills. */
export function userFacingSpec(spec: ProviderSpec, supplied: ReadonlySet<string>): ProviderSpec {
  return { ...spec, connectionConfiguration: configFields(spec).filter((f) => !supplied.has(f.name)) };
}

/** The stored configuration on reconnect, else the checked input; string values only, flow-filled keys left out. */
export async function installUserConfig(
  deps: Pick<RedirectDeps, 'connections'>,
  input: Pick<RedirectStart, 'base' | 'rawConfig'>,
  spec: ProviderSpec,
  supplied: ReadonlySet<string>,
): Promise<Record<string, string>> {
  const r = input.base.reconnect;
  const stored = r
    ? (await deps.connections.findConnection(input.base.namespace, r.integration, r.connectionId))?.resource.spec.connectionConfig
    : undefined;
  const config =
    stored ??
    checkConnectionConfig(userFacingSpec(spec, supplied), (input.rawConfig ?? {}) as Record<string, unknown>, {
      path: 'connectionConfig',
      strict: true,
    });
  return Object.fromEntries(Object.entries(config).flatMap(([k, v]) => (typeof v === 'string' && !supplied.has(k) ? [[k, v]] : [])));
}
