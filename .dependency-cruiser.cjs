/**
 * The project's layering as dependency-cruiser rules, run by `npm test` (`npm run lint:deps`): an import against
 * them fails the run, so the arrows the README describes are kept by the tool, not by review.
 */
/**
 * The adapters (and the composition point that wires them): what talks to DynamoDB, the processor, the rails, KMS
 * and Secrets Manager (lib/secrets), SQS and partners' servers. Of lib/webhooks only the sender and the SQS queue
 * are adapters: queue.ts is the delivery queue's port, signing.ts pure HMAC, and url-safety.ts the URL rules with
 * the resolver passed in, which use cases call themselves.
 */
const ADAPTERS = '^lib/((store|composition|processor|payouts|secrets)/|webhooks/(http-sender|sqs-queue)[.]ts$)';

/** A forbidden import: from modules matching `from` to modules matching `to`, with why. */
const rule = (name, comment, from, to) => ({ name, severity: 'error', comment, from, to });

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    rule('no-circular', 'Modules that import each other, directly or round a loop, cannot be read or changed one at a time.', {}, { circular: true }),
    rule('domain-is-pure', 'lib/domain holds the rules of the business: it imports nothing of the project outside itself.', { path: '^lib/domain/' }, { path: '^(lib|infra|functions|examples|console|test)/', pathNot: '^lib/domain/' }),
    rule('use-cases-take-ports', 'A use case takes its adapters as ports (interfaces beside it), wired in lib/composition: it imports no adapter.', { path: '^lib/use-cases/' }, { path: ADAPTERS }),
    rule('http-knows-no-store', 'lib/http knows the middleware chain, schemas and presenters, not DynamoDB nor KMS: the stores and the secret box reach it as ports, wired in lib/composition.', { path: '^lib/http/' }, { path: ADAPTERS }),
    rule('functions-only-lib', 'A Lambda handler is built from lib/ alone: infra/ is build and deploy code, never bundled.', { path: '^functions/' }, { path: '^(infra|bench|examples|console|test)/' }),
    rule('lib-not-infra', 'What runs in Lambda does not reach into build, deploy or local-runtime code.', { path: '^lib/' }, { path: '^(infra|bench|functions|examples|console|test)/' }),
    rule('aws-not-local', 'The CDK app deploys to AWS: it does not depend on the local runtime, its sandboxes, the scripts or the benchmarks.', { path: '^infra/aws/' }, { path: '^(infra/(local|scripts)|bench)/' }),
    rule('shared-is-shared', 'infra/shared holds what the CDK app and the local runtime both import: it depends on neither side.', { path: '^infra/shared/' }, { path: '^(infra/(aws|local|scripts|build|openapi)|bench)/' }),
    rule('local-parts-below-runtime', 'infra/local/runtime composes the local parts (delivery, lambda, sandboxes): none of them reaches back into it.', { path: '^infra/local/(delivery|lambda|sandbox)/' }, { path: '^infra/local/runtime/' }),
    rule('lambda-below-delivery', 'The Lambda stand-in invokes functions; the delivery pipeline is one of its callers, not something it knows.', { path: '^infra/local/lambda/' }, { path: '^infra/local/delivery/' }),
    rule('sandboxes-stand-alone', 'A sandbox stands in for a third party (processor, rails, a partner): it knows nothing of the service’s runtime.', { path: '^infra/local/sandbox/' }, { path: '^infra/local/(runtime|lambda|delivery)/' }),
    rule('nothing-imports-examples', 'examples/ is a partner’s code, copied out of the repository: the service does not depend on it (the sandbox checkout runs examples/partner-backend/src/main.ts by its path, as the partner’s own process, by design: a run-time dependency this rule cannot see).', { pathNot: '^(examples|test)/' }, { path: '^examples/' }),
    rule('nothing-imports-benchmarks', 'The benchmarks measure the service; nothing else depends on them (but their tests: the capacity model\'s arithmetic is tested).', { pathNot: '^(bench|test)/' }, { path: '^bench/' }),
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
