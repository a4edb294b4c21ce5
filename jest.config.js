// Three projects, one `npm test`: pure unit tests, integration tests against DynamoDB Local (started once,
// in memory, by the global setup), and CDK template assertions. TypeScript is compiled by SWC as ES modules
// (middy 7 is ESM-only), so jest runs with --experimental-vm-modules (see package.json).
const swc = [
  '@swc/jest',
  {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2023' },
    module: { type: 'es6' },
    sourceMaps: 'inline',
    swcrc: false,
  },
];

const base = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc },
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
