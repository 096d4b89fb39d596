/**
 * `npm run test:e2e`: the end-to-end suite (test/e2e/) on a local node (dev/local-node.ts). Its own
 * config, not a project of jest.config.js, so `npm test` does not start a node; the suite starts its
 * node, control plane and helm releases itself. One worker: one node per machine.
 */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/dist/test/e2e'],
  testMatch: ['**/*.test.js'],
  // Builds the image once for every file (`npm run image`), where a node can start.
  globalSetup: '<rootDir>/dist/test/e2e/global-setup.js',
  transform: {},
  maxWorkers: 1,
  testTimeout: 600000,
  reporters: ['default', '<rootDir>/dist/test/support/summary-reporter.js'],
};
