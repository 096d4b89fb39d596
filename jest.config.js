/**
 * Jest runs the compiled tests (tsc writes dist/) in native ESM mode; `npm test` builds first.
 * One real control plane serves the whole run; each test file works in its own namespace.
 */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/dist/test'],
  testMatch: ['**/*.test.js'],
  globalSetup: '<rootDir>/dist/test/support/global-setup.js',
  globalTeardown: '<rootDir>/dist/test/support/global-teardown.js',
  testTimeout: 120000,
  maxWorkers: 2,
  transform: {},
  reporters: ['default', '<rootDir>/dist/test/support/summary-reporter.js'],
};
