/**
 * `npm run demo` as a smoke test: the whole money flow on a service of its own (`npm start`), every
 * step's result checked by the demo itself; it exits 0 only when all of them are right.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';

describe('npm run demo', () => {
  it('drives partner, key, webhook endpoint, merchant, checkout, confirmation, verified webhook, settlement, payout and report, and exits 0', () => {
    const run = spawnSync('npm', ['run', '-s', 'demo'], { encoding: 'utf8', timeout: 240_000 });
    const output = `${run.stdout}${run.stderr}`;

    expect({ status: run.status, ended: output.includes('Every step did what the service promises.') }).toEqual({ status: 0, ended: true });
    expect(output.match(/^\s*\d+\. .* \.\.\. ok \(\d+ ms\)$/gm)).toHaveLength(10);
    expect(output).toMatch(/verified \(Standard Webhooks\); svc_tx_\w+ succeeded: 100 USD = processor 2\.9 \+ platform 3\.8 \+ net 93\.3/);
    expect(output).toMatch(/^\s+transaction,svc_tx_\w+,order-\d+,[^,]+,USD,100\.00,2\.90,3\.80,93\.30$/m);
  }, 300_000);
});
