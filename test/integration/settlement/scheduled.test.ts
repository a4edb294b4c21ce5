/**
 * The scheduled settlement function as Lambda runs it (functions/settlement-scheduled.ts, its middy chain): the
 * metrics the run counts reach CloudWatch only if the chain flushes them at the end of the invocation, as the
 * HTTP chain does for a request. Metrics are flushed in AWS only (`lib/observability.ts`); here its two AWS-only
 * switches (`countMetric`, `metricsMiddleware`) are turned on for the scheduled invocation alone, with the real
 * Powertools metrics behind them, everything else being the real module, against DynamoDB Local.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { SettlementDeps } from '../../../lib/use-cases/settlements';

// The test environment disables Powertools metrics (test/support/env.ts); the Metrics instance reads it as it is made.
delete process.env.POWERTOOLS_METRICS_DISABLED;
/** On while the scheduled handler is built and invoked: the setup's HTTP requests then neither count nor flush. */
let inAws = false;
const observability = await import('../../../lib/observability');
jest.unstable_mockModule('../../../lib/observability', () => ({
  ...observability,
  countMetric: (name: string, count = 1) => {
    if (inAws) observability.metrics.addMetric(name, MetricUnit.Count, count);
  },
  metricsMiddleware: () => (inAws ? [logMetrics(observability.metrics)] : []),
}));
const { createLambdaHandler } = await import('../../../functions/settlement-scheduled');
const { settlementDeps } = await import('../../../lib/composition');
const { usePartnerSuite } = await import('../../support/api');
const { transactionIn } = await import('../../support/settlement');
const { lambdaContext } = await import('../../support/events');

const TEST_TIMEOUT_MS = 60_000;

const suite = usePartnerSuite();

/** The settlement deps with "every partner" meaning these only: the table is shared with other test files running at the same time. */
const onlyPartners = (partnerIds: string[], deps: SettlementDeps = settlementDeps): SettlementDeps => ({
  ...deps,
  partners: {
    ...deps.partners,
    allPartnerIds: async function* () {
      yield* partnerIds;
    },
  },
});

interface EmfBlob {
  _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }> };
  [key: string]: unknown;
}

/** Invokes the scheduled function over `deps` as Lambda would; its outcome and the EMF blobs it printed. */
async function invokeScheduled(deps: SettlementDeps): Promise<{ outcome: PromiseSettledResult<unknown>; emf: EmfBlob[] }> {
  const lines: string[] = [];
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  inAws = true;
  let outcome: PromiseSettledResult<unknown>;
  try {
    const handler = createLambdaHandler(deps);
    outcome = await handler({ 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} }, lambdaContext()).then(
      (value) => ({ status: 'fulfilled', value }) as const,
      (reason: unknown) => ({ status: 'rejected', reason }) as const,
    );
  } finally {
    inAws = false;
    write.mockRestore();
  }
  const emf = lines
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as EmfBlob);
  return { outcome, emf };
}

/** `metric`'s values across the blobs, where a blob declares it in the service's namespace with the `service` dimension. */
const valuesOf = (emf: EmfBlob[], metric: string) =>
  emf
    .filter((blob) =>
      blob._aws.CloudWatchMetrics.some(
        (group) => group.Namespace === 'PartnerPayments' && group.Dimensions.flat().includes('service') && group.Metrics.some((m) => m.Name === metric),
      ),
    )
    .map((blob) => ({ value: blob[metric], service: blob.service }));

describe('the scheduled settlement function', () => {
  it('flushes the run’s metrics as an EMF blob at the end of the invocation: SettlementBatchesCreated', async () => {
    // Arrange
    const partner = await suite.api.createPartner();
    const clientId = await suite.api.createClient(partner);
    await transactionIn(suite.api, { partnerId: partner.partnerId, clientId }, { amountMinor: 2_500, currency: 'USD' });

    // Act
    const { outcome, emf } = await invokeScheduled(onlyPartners([partner.partnerId]));

    // Assert
    expect(outcome).toEqual({ status: 'fulfilled', value: { created_batches: 1, continuing: false } });
    expect(valuesOf(emf, 'SettlementBatchesCreated')).toEqual([{ value: 1, service: 'partner-payments' }]);
  }, TEST_TIMEOUT_MS);

  it('flushes them also when the run fails, so the failure is counted: SettlementRunFailures', async () => {
    // Arrange: the only partner's waiting transactions cannot be read
    const failing = onlyPartners(['p_unreadable'], {
      ...settlementDeps,
      settlements: {
        ...settlementDeps.settlements,
        listWaiting: async () => {
          throw new Error('the table is unavailable');
        },
      },
    });

    // Act
    const { outcome, emf } = await invokeScheduled(failing);

    // Assert
    expect(outcome).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: 'the table is unavailable' }) });
    expect(valuesOf(emf, 'SettlementRunFailures')).toEqual([{ value: 1, service: 'partner-payments' }]);
  }, TEST_TIMEOUT_MS);
});
