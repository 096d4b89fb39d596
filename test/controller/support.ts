/**
 * Kept only for conditions.test.ts, which another change rewrites: it adapts the old call shape to
 * test/support. New tests import test/support/replica.js and test/support/kube.js directly; delete
 * this file once conditions.test.ts does too.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Config } from '../../src/app/config.js';
import type { RunningController, StartControllerOptions } from '../../src/controller/start.js';
import { startReplica as start, type Replica as TestReplica } from '../support/replica.js';

export { condition, eventsOf, readCustom } from '../support/kube.js';

export interface Replica extends TestReplica {
  running: RunningController;
}

export async function startReplica(
  kc: KubeConfig,
  namespace: string,
  identity: string,
  opts: StartControllerOptions = {},
  config: Partial<Config> = {},
): Promise<Replica> {
  const replica = await start(kc, { namespaces: [namespace], components: ['controller'], identity, controller: opts, config });
  return { ...replica, running: replica.controller! };
}
