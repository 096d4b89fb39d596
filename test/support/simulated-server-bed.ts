/**
 * A namespace with its Environment, simulated providers, and one Latchkey server reaching them (only the providers'
 * addresses differ from production: the egress guard's resolver). What the Provider and Integration tests that
 * drive Latchkey without a browser (ADP, Bullhorn, SuccessFactors, the token request shapes) set up alike.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { createTestNamespace } from '../../dev/cluster.js';
import { createEnvironment, type TestEnvironment } from '../../dev/fixtures.js';
import type { Logger } from '../../src/platform/log.js';
import { sealSession } from './fixtures.js';
import { startSimulatedServer, type Replica } from './replica.js';
import { submitConnectForm } from './simulated-consent.js';
import { startSimulators, type ServedSimulator, type SimulatorHost } from './simulators/framework.js';

export interface SimulatedServerBed {
  host: SimulatorHost;
  ns: { name: string; delete(): Promise<void> };
  env: TestEnvironment;
  latchkey: Replica;
  /** A Connect session's token for `endUser` and one Integration. */
  session(integration: string, endUser: string): string;
  /** The Connect form of `integration` submitted by a new end user. */
  submitForm(
    integration: string,
    values: Record<string, string>,
    connectionConfig?: Record<string, string>,
  ): ReturnType<typeof submitConnectForm>;
  close(): Promise<void>;
}

export async function startSimulatedServerBed(
  kc: KubeConfig,
  prefix: string,
  sims: ServedSimulator[],
  o: {
    /** The Providers, Secrets and Integrations of the test, in the new namespace. */
    prepare(namespace: string): Promise<void>;
    /** When the server's caches hold what `prepare` made. */
    synced(ctx: Replica['ctx'], namespace: string): unknown;
    logger?: Logger;
  },
): Promise<SimulatedServerBed> {
  const host = await startSimulators(sims);
  const ns = await createTestNamespace(kc, prefix);
  const env = await createEnvironment(kc, ns.name, { mode: 'development' });
  await o.prepare(ns.name);
  const latchkey = await startSimulatedServer(kc, ns.name, {
    key: env.secretKey,
    egress: host.egressGuard(),
    synced: (ctx) => o.synced(ctx, ns.name),
    ...(o.logger ? { logger: o.logger } : {}),
  });
  let users = 0;
  const session = (integration: string, endUser: string) =>
    sealSession(env.secretKey, { namespace: ns.name, endUser: { id: endUser }, allowedIntegrations: [integration] });
  return {
    host,
    ns,
    env,
    latchkey,
    session,
    submitForm(integration, values, connectionConfig = {}) {
      const endUser = `user-${++users}`;
      return submitConnectForm(latchkey, ns.name, {
        endUser,
        session: session(integration, endUser),
        integration,
        values,
        connectionConfig,
      });
    },
    async close() {
      await latchkey.stop();
      await ns.delete();
      await host.close();
    },
  };
}
