/**
 * The store as the contract tests (test/api/spec-timing, nango-client, test/connect/nango-frontend) read
 * it in their set-up, one object with the methods they call, from before the store was split by job
 * (#55). Those tests are promises to users and are not edited for a refactoring; this view keeps their
 * set-up lines as written, each method answered by the part of the store that now owns it.
 */
import type { StoreParts } from '../../src/k8s/store.js';

export interface ContractStoreView {
  getConnection: StoreParts['connections']['getConnection'];
  listConnections: StoreParts['connectionScans']['listConnections'];
  labelShard: StoreParts['connectionUpkeep']['labelShard'];
  getIntegration: StoreParts['catalog']['getIntegration'];
  getProvider: StoreParts['catalog']['getProvider'];
  listEnvironments: StoreParts['catalog']['listEnvironments'];
  readSecretValue: StoreParts['catalog']['readSecretValue'];
}

export function contractStoreView(parts: StoreParts): ContractStoreView {
  const { connections, connectionScans, connectionUpkeep, catalog } = parts;
  return {
    getConnection: (...a) => connections.getConnection(...a),
    listConnections: (...a) => connectionScans.listConnections(...a),
    labelShard: (...a) => connectionUpkeep.labelShard(...a),
    getIntegration: (...a) => catalog.getIntegration(...a),
    getProvider: (...a) => catalog.getProvider(...a),
    listEnvironments: (...a) => catalog.listEnvironments(...a),
    readSecretValue: (...a) => catalog.readSecretValue(...a),
  };
}
