/**
 * cdk-nag's AwsSolutions rules over every stack of the app, as `npx cdk synth` builds it, for each stage: no error
 * may stand. A finding the design accepts is acknowledged in the stack that owns the resource
 * (`Validations.of(resource).acknowledge({ id, reason })`, cdk-nag 3), with its reason.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { App, type Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { addServiceStacks } from '../../infra/aws/service-stacks';
import { consoleDistFixture } from '../support/console-dist';

const ADMIN_AUTH = {
  adminJwksUrl: 'https://issuer.example/.well-known/jwks.json',
  adminJwtIssuer: 'https://issuer.example/',
  adminJwtAudience: 'partner-payments-admin',
};

/** Every stack of the app for these context values (the console stack packs a stand-in build: the rules never read it). */
const consoleDist = consoleDistFixture();
const stacksOf = (context: Record<string, string>): Stack[] => Object.values(addServiceStacks(new App({ context }), { consoleDist }));

/** cdk-nag's unacknowledged errors in `stack`: `rule: construct paths`. */
function nagErrors(stack: Stack): string[] {
  const report = new AwsSolutionsChecks(undefined, { verbose: false }).validateScope(stack);
  return report.violations
    .filter((violation) => violation.severity === 'error')
    .map((violation) => `${violation.ruleName}: ${violation.violatingResources.map((resource) => resource.constructPath).join(', ')}`);
}

describe.each([
  ['dev', { ...ADMIN_AUTH, stage: 'dev' }],
  ['prod', { ...ADMIN_AUTH, stage: 'prod', alarmEmail: 'oncall@example.com' }],
  ['dev without admin auth', { stage: 'dev' }],
])('cdk-nag AwsSolutions, %s', (_name, context) => {
  let stacks: Stack[];

  beforeAll(() => {
    stacks = stacksOf(context);
  }, 240_000);

  it('reports no error on any stack (each finding is fixed or suppressed with its reason)', () => {
    expect(stacks.map((stack) => stack.stackName).sort()).toEqual([
      'PartnerPayments-Api',
      'PartnerPayments-Console',
      'PartnerPayments-Delivery',
      'PartnerPayments-Reconciliation',
      'PartnerPayments-Settlement',
      'PartnerPayments-Stateful',
    ]);
    expect(Object.fromEntries(stacks.map((stack) => [stack.stackName, nagErrors(stack)]))).toEqual(
      Object.fromEntries(stacks.map((stack) => [stack.stackName, []])),
    );
  });

  it('names a reason for every acknowledged finding', () => {
    const acknowledged = stacks
      .flatMap((stack) => stack.node.findAll())
      .flatMap((construct) => construct.node.metadata.filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY))
      .flatMap((entry) => Object.entries(entry.data as Record<string, string>));

    expect(acknowledged.length).toBeGreaterThan(0);
    for (const [id, reason] of acknowledged) expect({ id, reason: reason.length >= 40 }).toEqual({ id, reason: true });
  });

  it('grants on the resource `*` only X-Ray’s actions, which take no other (the IAM5 acknowledgment relies on it)', () => {
    const onEverything = stacks.flatMap((stack) =>
      Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy'))
        .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>)
        .filter((statement) => [statement.Resource].flat().includes('*'))
        .flatMap((statement) => [statement.Action].flat()),
    );

    expect(onEverything.length).toBeGreaterThan(0);
    expect([...new Set(onEverything)].sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
  });
});
