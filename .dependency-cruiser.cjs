/**
 * The project's layering as dependency-cruiser rules, run by `npm test` (`npm run lint:deps`). Known violations
 * still to mend are listed in `.dependency-cruiser-known-violations.json` (`npm run lint:deps:baseline` rewrites it):
 * a new one fails, and the list only shrinks.
 */
const ADAPTERS = '^lib/(store|adapters|processor|payouts)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules that import each other, directly or round a loop, cannot be read or changed one at a time.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment: 'lib/domain holds the rules of the business: it imports nothing of the project outside itself.',
      from: { path: '^lib/domain/' },
      to: { path: '^(lib|infra|functions|examples|console|test)/', pathNot: '^lib/domain/' },
    },
    {
      name: 'use-cases-take-ports',
      severity: 'error',
      comment: 'A use case takes its adapters as ports (interfaces beside it), wired in lib/adapters: it imports no adapter.',
      from: { path: '^lib/use-cases/' },
      to: { path: ADAPTERS },
    },
    {
      name: 'http-knows-no-store',
      severity: 'error',
      comment: 'lib/http knows the middleware chain, schemas and presenters, not DynamoDB.',
      from: { path: '^lib/http/' },
      to: { path: '^lib/store/' },
    },
    {
      name: 'functions-only-lib',
      severity: 'error',
      comment: 'A Lambda handler is built from lib/ alone: infra/ is build and deploy code, never bundled.',
      from: { path: '^functions/' },
      to: { path: '^(infra|examples|console|test)/' },
    },
    {
      name: 'lib-not-infra',
      severity: 'error',
      comment: 'What runs in Lambda does not reach into build, deploy or local-runtime code.',
      from: { path: '^lib/' },
      to: { path: '^(infra|functions|examples|console|test)/' },
    },
    {
      name: 'aws-not-local',
      severity: 'error',
      comment: 'The CDK app deploys to AWS: it does not depend on the local runtime, its sandboxes or benchmarks.',
      from: { path: '^infra/aws/' },
      to: { path: '^infra/local/' },
    },
    {
      name: 'nothing-imports-examples',
      severity: 'error',
      comment: 'examples/ is a partner’s code, copied out of the repository: the service does not depend on it.',
      from: { pathNot: '^(examples|test)/' },
      to: { path: '^examples/' },
    },
    {
      name: 'nothing-imports-benchmarks',
      severity: 'error',
      comment: 'The benchmarks measure the service; nothing else depends on them.',
      from: { pathNot: '^infra/local/bench' },
      to: { path: '^infra/local/bench' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|cdk\\.out|console/dist|\\.data)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
