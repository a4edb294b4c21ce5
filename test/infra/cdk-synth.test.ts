import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

type Resource = {
  Type: string;
  DeletionPolicy?: string;
  Properties: { Replicas?: Array<{ DeletionProtectionEnabled?: boolean }>; ReservedConcurrentExecutions?: number };
};

/** `npx cdk synth` with these `-c` settings: every stack's template, by stack name. */
async function synth(context: string[]): Promise<Record<string, { Resources: Record<string, Resource> }>> {
  const outdir = mkdtempSync(join(tmpdir(), 'cdk-out-'));
  try {
    await promisify(execFile)('npx', ['cdk', 'synth', '--quiet', '--output', outdir, ...context.flatMap((setting) => ['-c', setting])], { timeout: 120_000 });
    const stacks = ['PartnerPayments-Stateful', 'PartnerPayments-Api', 'PartnerPayments-Delivery', 'PartnerPayments-Settlement', 'PartnerPayments-Console'];
    return Object.fromEntries(stacks.map((stack) => [stack, JSON.parse(readFileSync(join(outdir, `${stack}.template.json`), 'utf8'))]));
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

const tableOf = (templates: Awaited<ReturnType<typeof synth>>) =>
  Object.values(templates['PartnerPayments-Stateful']?.Resources ?? {}).find((resource) => resource.Type === 'AWS::DynamoDB::GlobalTable');

describe('npx cdk synth', () => {
  it('synthesises every stack offline with the pinned CLI as dev (-c stage=dev): the table deleted with its stack', async () => {
    const templates = await synth(['stage=dev']);

    for (const template of Object.values(templates)) expect(Object.keys(template.Resources).length).toBeGreaterThan(0);
    expect(tableOf(templates)).toMatchObject({ DeletionPolicy: 'Delete', Properties: { Replicas: [{ DeletionProtectionEnabled: false }] } });
  }, 180_000);

  it('synthesises prod (-c stage=prod, with every setting) offline: the table retained and deletion-protected', async () => {
    const templates = await synth([
      'stage=prod',
      'adminJwksUrl=https://issuer.example/.well-known/jwks.json',
      'adminJwtIssuer=https://issuer.example/',
      'adminJwtAudience=partner-payments-admin',
      'railAApiBase=https://rail-a.example/v1',
      'railBApiBase=https://rail-b.example/v1',
      'settlementSchedule=rate(6 hours)',
      'settlementCutoff=now',
      'apiThrottleRate=50',
      'apiThrottleBurst=100',
      'alarmEmail=oncall@example.com',
      'processorWebhookConcurrency=20',
      'consoleOidcIssuer=https://issuer.example/',
      'consoleOidcClientId=partner-payments-console',
    ]);

    for (const template of Object.values(templates)) expect(Object.keys(template.Resources).length).toBeGreaterThan(0);
    expect(tableOf(templates)).toMatchObject({ DeletionPolicy: 'Retain', Properties: { Replicas: [{ DeletionProtectionEnabled: true }] } });
    expect(Object.values(templates['PartnerPayments-Api']?.Resources ?? {}).filter((resource) => resource.Type === 'AWS::ApiGatewayV2::Authorizer')).toHaveLength(1);
    const reserved = Object.entries(templates['PartnerPayments-Api']?.Resources ?? {}).filter(
      ([, resource]) => resource.Type === 'AWS::Lambda::Function' && resource.Properties.ReservedConcurrentExecutions !== undefined,
    );
    expect(reserved.map(([id, resource]) => [id, resource.Properties.ReservedConcurrentExecutions])).toEqual([[expect.stringMatching(/^Fnprocessorwebhook/), 20]]);
  }, 180_000);

  it('refuses to synthesise prod without the admin token settings, naming the missing ones', async () => {
    await expect(synth(['stage=prod', 'adminJwksUrl=https://issuer.example/.well-known/jwks.json'])).rejects.toMatchObject({
      stderr: expect.stringContaining('context adminJwtIssuer, adminJwtAudience: required for stage prod'),
    });
  }, 180_000);

  it('refuses to synthesise without a stage, or with one other than dev or prod, naming the setting', async () => {
    await expect(synth([])).rejects.toMatchObject({ stderr: expect.stringContaining('context stage: required, -c stage=dev or -c stage=prod') });
    await expect(synth(['stage=production'])).rejects.toMatchObject({ stderr: expect.stringContaining('context stage: expected dev or prod') });
  }, 180_000);

  it('refuses a settlement schedule EventBridge would not take, naming the setting', async () => {
    const outdir = mkdtempSync(join(tmpdir(), 'cdk-out-'));
    try {
      const synth = promisify(execFile)('npx', ['cdk', 'synth', '--quiet', '--output', outdir, '-c', 'stage=dev', '-c', 'settlementSchedule=every day'], { timeout: 120_000 });

      await expect(synth).rejects.toMatchObject({ stderr: expect.stringContaining('Error: context settlementSchedule: expected rate(') });
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }, 180_000);
});
