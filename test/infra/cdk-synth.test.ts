import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

describe('npx cdk synth', () => {
  it('synthesises every stack offline with the pinned CLI', async () => {
    const outdir = mkdtempSync(join(tmpdir(), 'cdk-out-'));
    try {
      await promisify(execFile)('npx', ['cdk', 'synth', '--quiet', '--output', outdir], { timeout: 120_000 });

      for (const stack of ['PartnerPayments-Stateful', 'PartnerPayments-Api', 'PartnerPayments-Delivery', 'PartnerPayments-Settlement']) {
        const template = JSON.parse(readFileSync(join(outdir, `${stack}.template.json`), 'utf8')) as { Resources: object };
        expect(Object.keys(template.Resources).length).toBeGreaterThan(0);
      }
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }, 180_000);

  it('refuses a settlement schedule EventBridge would not take, naming the setting', async () => {
    const outdir = mkdtempSync(join(tmpdir(), 'cdk-out-'));
    try {
      const synth = promisify(execFile)('npx', ['cdk', 'synth', '--quiet', '--output', outdir, '-c', 'settlementSchedule=every day'], { timeout: 120_000 });

      await expect(synth).rejects.toMatchObject({ stderr: expect.stringContaining('Error: context settlementSchedule: expected rate(') });
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }, 180_000);
});
