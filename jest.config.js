// Three projects, one `npm test`: pure unit tests, integration tests against DynamoDB Local (started once,
// in memory, by the global setup), and CDK template assertions. TypeScript is compiled by esbuild as ES
// modules (middy 7 is ESM-only), so jest runs with --experimental-vm-modules (see package.json).
//
// Why esbuild and not @swc/jest: the registry this project installs from carries only some platforms'
// binaries of @swc/core (and of jest 30's unrs-resolver), so their lockfile entries come out incomplete and
// `npm ci` refuses the lockfile. esbuild publishes every platform's binary, and already bundles the Lambdas.

const base = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': '<rootDir>/test/support/esbuild-transform.js' },
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  setupFiles: ['<rootDir>/test/support/env.ts'],
};

/** @type {import('jest').Config} */
export default {
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...base,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/integration/global-setup.ts',
      globalTeardown: '<rootDir>/test/integration/global-teardown.ts',
    },
    { ...base, displayName: 'infra', testMatch: ['<rootDir>/test/infra/**/*.test.ts'] },
  ],
};
