/**
 * Jest runs the compiled tests (tsc writes dist/) in native ESM mode; `npm test` builds first.
 * Two projects: `unit` (*.unit.test.js) needs no cluster and starts none; `cluster` gets one real
 * control plane for the whole run (its global setup runs only when one of its tests is selected),
 * and each of its test files works in its own namespace. `npm run test:unit` selects `unit` alone.
 */
const common = {
  testEnvironment: 'node',
  roots: ['<rootDir>/dist/test'],
  transform: {},
};

export default {
  maxWorkers: 2,
  // Top-level: Jest does not take testTimeout from a project's entry.
  testTimeout: 120000,
  reporters: ['default', '<rootDir>/dist/test/support/summary-reporter.js'],
  projects: [
    { ...common, displayName: 'unit', testMatch: ['**/*.unit.test.js'] },
    {
      ...common,
      displayName: 'cluster',
      testMatch: ['**/*.test.js'],
      // test/e2e runs on a local node, by `npm run test:e2e` (jest.e2e.config.js).
      testPathIgnorePatterns: ['\\.unit\\.test\\.js$', '/dist/test/e2e/'],
      globalSetup: '<rootDir>/dist/test/support/global-setup.js',
      globalTeardown: '<rootDir>/dist/test/support/global-teardown.js',
    },
  ],
};
