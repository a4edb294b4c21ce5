/**
 * The metric the CDK app alarms on when a merchant owes money for more than 7 days (decisions.md §5a): a run over
 * every partner counts the merchants whose waiting entries net below zero, and those owing since more than 7 days
 * (their oldest waiting reversal). Run as in AWS, so the embedded-metric-format lines are what CloudWatch reads.
 */
import { describe, expect, it, jest } from '@jest/globals';

// The runtime is configuration, read once when the modules load: load them as AWS would run them.
Object.assign(process.env, { SVC_RUNTIME: 'aws', AWS_REGION: 'eu-west-1', TABLE_NAME: 'tbl', KMS_KEY_ID: 'alias/test', LOG_LEVEL: 'SILENT' });
for (const name of ['POWERTOOLS_METRICS_DISABLED', 'DYNAMODB_ENDPOINT', 'PROCESSOR_API_BASE']) delete process.env[name];
const { runSettlement } = await import('../../../lib/use-cases/settlements');
const { metrics } = await import('../../../lib/observability');
const { currencyCode } = await import('../../../lib/domain/money');
type SettlementItem = import('../../../lib/domain/settlement').SettlementItem;
type SettlementDeps = import('../../../lib/use-cases/settlements').SettlementDeps;

const NOW = new Date('2026-11-27T01:00:00.000Z');

/** An entry of `clientId` with this net, written `daysAgo` days before the run. */
const entry = (clientId: string, netMinor: number, daysAgo: number, type: SettlementItem['type']): SettlementItem => {
  const at = new Date(NOW.getTime() - daysAgo * 86_400_000).toISOString();
  return {
    type,
    key: type === 'transaction' ? 'sale' : `refund#${String(-netMinor).padStart(12, '0')}`,
    cause: 'pi_1',
    svcTxId: `svc_tx_${clientId}_${daysAgo}`,
    partnerId: 'ptr_a',
    clientId,
    partnerReference: 'order-1',
    currency: currencyCode('EUR'),
    txCreatedAt: at,
    createdAt: at,
    grossMinor: netMinor,
    processorFeeMinor: 0,
    platformFeeMinor: 0,
    svcEarningMinor: 0,
    netMinor,
    settlesTransaction: false,
  };
};

function depsWith(items: SettlementItem[]): SettlementDeps {
  return {
    settlements: {
      listWaiting: async () => ({ items, withoutFees: [] }),
      listBuilds: async () => [],
      claimGroup: async () => true,
      releaseGroup: async () => undefined,
      startBuild: async () => undefined,
      reserveLines: async (_batch: unknown, lines: SettlementItem[]) => lines,
      commitBuild: async () => 'committed',
    },
    partners: {
      allPartnerIds: async function* () {
        yield 'ptr_a';
      },
    },
    cutoff: 'now',
    groupLeaseMs: 60_000,
    now: () => NOW,
  } as unknown as SettlementDeps;
}

/** The values of `name` in the EMF lines `work` writes when the stored metrics are published. */
async function emitted(name: string, work: () => Promise<unknown>): Promise<number[]> {
  const lines: string[] = [];
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    await work();
    metrics.publishStoredMetrics();
  } finally {
    write.mockRestore();
  }
  return lines
    .map((line) => line.trim())
    .filter((line) => line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((record) => name in record)
    .map((record) => record[name] as number);
}

describe('the owing metric of a run over every partner', () => {
  it('counts the merchants owing, and those owing since more than 7 days', async () => {
    const deps = depsWith([
      // shop-old owes since 9 days: a sale 20.00, a reversal 50.00
      entry('shop-old', 2_000, 10, 'transaction'),
      entry('shop-old', -5_000, 9, 'refund'),
      // shop-new owes since 2 days
      entry('shop-new', -1_000, 2, 'refund'),
      // shop-paid owes nothing: it gets a batch
      entry('shop-paid', 3_000, 3, 'transaction'),
    ]);

    const owingOver7Days = await emitted('MerchantsOwingOver7Days', () => runSettlement(deps, {}));
    const owing = await emitted('MerchantsOwing', () => runSettlement(deps, {}));

    expect(owingOver7Days).toEqual([1]);
    expect(owing).toEqual([2]);
  });

  it('emits zero when nobody owes, so the alarm clears', async () => {
    const deps = depsWith([entry('shop-paid', 3_000, 3, 'transaction')]);
    expect(await emitted('MerchantsOwingOver7Days', () => runSettlement(deps, {}))).toEqual([0]);
  });

  it('emits nothing for a run scoped to one partner (it sees only that partner)', async () => {
    const deps = depsWith([entry('shop-new', -1_000, 9, 'refund')]);
    expect(await emitted('MerchantsOwingOver7Days', () => runSettlement(deps, { partnerId: 'ptr_a' }))).toEqual([]);
  });
});
