/**
 * The reconciliation run's selection, bounds and resumption (lib/use-cases/reconciliation.ts), over in-memory ports:
 * a sharded index that behaves as the sparse gsi4 does (keys removed by the write that moves a transaction), intents
 * read by the processor adapter's own mapping (`intentOutcomeEvent`), and the processor event's real path
 * (`applyPaymentEvent`) writing into a map. No I/O, no clock but the one given.
 */
import { describe, expect, it } from '@jest/globals';
import { runWithDeadline } from '../../lib/deadline';
import { NO_REVERSALS } from '../../lib/domain/ledger';
import { currencyCode } from '../../lib/domain/money';
import type { Client, Partner } from '../../lib/domain/partner';
import type { Transaction } from '../../lib/domain/transaction';
import { intentOutcomeEvent } from '../../lib/processor/event-objects';
import type { PaymentIntent } from '../../lib/processor/port';
import type { PaymentWrite } from '../../lib/use-cases/processor-events';
import { type DueTransaction, oldestDue, type ReconciliationLimits, runReconciliation } from '../../lib/use-cases/reconciliation';

const NOW = new Date('2026-11-27T12:00:00.000Z');
const minutesAgo = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000).toISOString();
const LIMITS: ReconciliationLimits = { minAgeMs: 10 * 60_000, maxChecks: 100, concurrency: 2 };
const SHARDS = 4;

const partner: Partner = { partnerId: 'ptr_1', name: 'P', status: 'active', kycStatus: 'approved', serviceFeePercentage: 1, rateLimitPerMinute: null, branding: null, createdAt: minutesAgo(999), updatedAt: minutesAgo(999) };
const client: Client = { id: 'cl_1', partnerId: 'ptr_1', clientId: 'merchant-1', legalName: 'M', status: 'active', partnerFeePercentage: null, partnerFeeFlatUsdCents: null, createdAt: minutesAgo(999), updatedAt: minutesAgo(999) };

type IntentState = 'open' | 'succeeded' | 'canceled' | 'declined' | 'unknown' | 'unavailable';

/** A world of `transactions` (id, shard, minutes since last change, the intent's state at the processor). */
function world(transactions: Array<{ id: string; shard: number; changedMinutesAgo: number; intent: IntentState }>) {
  const table = new Map<string, Transaction>();
  const index = new Map<string, { shard: number; position: string }>();
  const intents = new Map<string, IntentState>();
  const writes: PaymentWrite[] = [];
  const processorCalls: string[] = [];
  for (const { id, shard, changedMinutesAgo, intent } of transactions) {
    const changedAt = minutesAgo(changedMinutesAgo);
    table.set(id, {
      id: `rec_${id}`, svcTxId: id, partnerId: partner.partnerId, partnerName: 'P', clientId: client.clientId, clientName: 'M', partnerReference: `ref-${id}`,
      processorPaymentIntentId: `pi_${id}`, amountMinor: 1500, currency: currencyCode('USD'), status: 'pending', settlementStatus: 'unsettled', fees: null,
      reversals: NO_REVERSALS, revision: 0, receiptEmail: null, statementDescriptorSuffix: null, meta: null, createdAt: changedAt, updatedAt: changedAt,
    });
    index.set(id, { shard, position: `${changedAt}#${id}` });
    intents.set(`pi_${id}`, intent);
  }
  const stripeStatus: Record<IntentState, Record<string, unknown>> = {
    open: { status: 'requires_payment_method', last_payment_error: null },
    succeeded: { status: 'succeeded' },
    canceled: { status: 'canceled' },
    declined: { status: 'requires_payment_method', last_payment_error: { code: 'card_declined' } },
    unknown: {},
    unavailable: {},
  };
  const deps = {
    now: () => NOW,
    queue: {
      shards: SHARDS,
      listDue: async (shard: number, dueBefore: string, limit: number): Promise<DueTransaction[]> =>
        [...index.entries()]
          .filter(([, entry]) => entry.shard === shard && entry.position <= `${dueBefore}#\uffff`)
          .map(([svcTxId, entry]) => ({ svcTxId, position: entry.position }))
          .sort((a, b) => a.position.localeCompare(b.position))
          .slice(0, limit),
      markChecked: async (due: DueTransaction, checkedAt: string) => {
        const entry = index.get(due.svcTxId);
        if (entry?.position !== due.position) return false;
        entry.position = `${checkedAt}#${due.svcTxId}`;
        return true;
      },
    },
    processor: {
      retrievePaymentIntent: async (id: string): Promise<PaymentIntent | undefined> => {
        processorCalls.push(id);
        const state = intents.get(id);
        if (state === 'unavailable') throw new Error('the processor is unavailable');
        if (state === undefined || state === 'unknown') return undefined;
        const object: Record<string, unknown> = { id, object: 'payment_intent', amount: 1500, currency: 'usd', metadata: {}, ...stripeStatus[state] };
        return { id, status: String(object.status), amountMinor: 1500, currency: currencyCode('USD'), clientSecret: '', metadata: {}, outcomeEvent: intentOutcomeEvent(object) };
      },
    },
    paymentEvents: {
      transactions: { getTransaction: async (svcTxId: string) => table.get(svcTxId) },
      payees: { getPayee: async () => ({ partner, client }) },
      webhookEndpoints: { listWebhookEndpoints: async () => [] },
      payments: {
        // As the store's write: conditional on the revision, the index keys gone once it no longer waits.
        writePaymentUpdate: async (write: PaymentWrite) => {
          const current = table.get(write.transaction.svcTxId);
          if (current?.revision !== write.transaction.revision) return 'conflict' as const;
          table.set(current.svcTxId, { ...current, status: write.update.status, fees: write.update.fees, revision: current.revision + 1, updatedAt: write.now });
          index.delete(current.svcTxId);
          writes.push(write);
          return 'applied' as const;
        },
      },
      processorFeePercent: 2.9,
    },
  };
  return { deps, table, index, writes, processorCalls, setIntent: (id: string, state: IntentState) => intents.set(`pi_${id}`, state) };
}

describe('runReconciliation', () => {
  it('asks only about transactions unchanged for the minimum age, from every shard, oldest first', async () => {
    // Arrange: due ones in shards 0 and 3, one too recent
    const w = world([
      { id: 'tx_late', shard: 3, changedMinutesAgo: 30, intent: 'open' },
      { id: 'tx_recent', shard: 0, changedMinutesAgo: 9, intent: 'succeeded' },
      { id: 'tx_oldest', shard: 0, changedMinutesAgo: 60, intent: 'succeeded' },
      { id: 'tx_due', shard: 2, changedMinutesAgo: 10, intent: 'canceled' },
    ]);

    // Act
    const report = await runReconciliation(w.deps, { ...LIMITS, concurrency: 1 });

    // Assert
    expect(w.processorCalls).toEqual(['pi_tx_oldest', 'pi_tx_late', 'pi_tx_due']);
    expect(report).toEqual({ checked: 3, fixed: 2, open: 1, moved: 0, failed: 0, more: false });
    expect([...w.table.values()].map((tx) => [tx.svcTxId, tx.status, tx.revision])).toEqual([
      ['tx_late', 'pending', 0],
      ['tx_recent', 'pending', 0],
      ['tx_oldest', 'succeeded', 1],
      ['tx_due', 'abandoned', 1],
    ]);
    expect(w.writes.map((write) => write.eventId)).toEqual(['intent_state_pi_tx_oldest_succeeded', 'intent_state_pi_tx_due_abandoned']);
  });

  it('applies a declined payment as failed through the event path, and leaves an intent the processor does not know waiting', async () => {
    const w = world([
      { id: 'tx_declined', shard: 1, changedMinutesAgo: 20, intent: 'declined' },
      { id: 'tx_unknown', shard: 1, changedMinutesAgo: 25, intent: 'unknown' },
    ]);

    const report = await runReconciliation(w.deps, LIMITS);

    expect(report).toMatchObject({ checked: 2, fixed: 1, open: 1 });
    expect(w.table.get('tx_declined')).toMatchObject({ status: 'failed', revision: 1 });
    expect(w.writes[0]?.update.notices).toEqual([{ event: 'transaction_failed', status: 'failed' }]);
    expect(w.index.get('tx_unknown')?.position).toBe(`${NOW.toISOString()}#tx_unknown`);
  });

  it('checks at most maxChecks a run, the oldest across shards, and says more are due', async () => {
    const w = world([
      { id: 'tx_a', shard: 0, changedMinutesAgo: 50, intent: 'open' },
      { id: 'tx_b', shard: 1, changedMinutesAgo: 40, intent: 'open' },
      { id: 'tx_c', shard: 0, changedMinutesAgo: 30, intent: 'succeeded' },
      { id: 'tx_d', shard: 3, changedMinutesAgo: 20, intent: 'succeeded' },
    ]);

    const report = await runReconciliation(w.deps, { ...LIMITS, maxChecks: 2 });

    expect(report).toEqual({ checked: 2, fixed: 0, open: 2, moved: 0, failed: 0, more: true });
    expect(w.processorCalls.sort()).toEqual(['pi_tx_a', 'pi_tx_b']);
  });

  it('resumes where the last run stopped: payments the processor still holds open go to the back and never starve the others', async () => {
    // Arrange: the two oldest stay open at the processor for ever
    const w = world([
      { id: 'tx_open1', shard: 0, changedMinutesAgo: 50, intent: 'open' },
      { id: 'tx_open2', shard: 1, changedMinutesAgo: 40, intent: 'open' },
      { id: 'tx_paid', shard: 2, changedMinutesAgo: 30, intent: 'succeeded' },
    ]);
    const runsLater = (minutes: number) => ({ ...w.deps, now: () => new Date(NOW.getTime() + minutes * 60_000) });

    // Act: runs of two checks, 15 minutes apart
    const first = await runReconciliation(w.deps, { ...LIMITS, maxChecks: 2 });
    const second = await runReconciliation(runsLater(15), { ...LIMITS, maxChecks: 2 });

    // Assert
    expect(first).toMatchObject({ checked: 2, fixed: 0, more: true });
    expect(second).toMatchObject({ fixed: 1 });
    expect(w.table.get('tx_paid')).toMatchObject({ status: 'succeeded', revision: 1 });
    expect(w.processorCalls.slice(0, 3)).toEqual(expect.arrayContaining(['pi_tx_open1', 'pi_tx_open2', 'pi_tx_paid']));
  });

  it('is idempotent: a second run, or one after the event came, moves nothing again', async () => {
    const w = world([{ id: 'tx_1', shard: 0, changedMinutesAgo: 30, intent: 'succeeded' }]);

    const first = await runReconciliation(w.deps, LIMITS);
    const second = await runReconciliation(w.deps, LIMITS);

    expect(first).toMatchObject({ fixed: 1 });
    expect(second).toEqual({ checked: 0, fixed: 0, open: 0, moved: 0, failed: 0, more: false });
    expect(w.writes).toHaveLength(1);
  });

  it('counts a check the processor could not answer as failed, keeps its place for the next run, and goes on with the others', async () => {
    const w = world([
      { id: 'tx_down', shard: 0, changedMinutesAgo: 50, intent: 'unavailable' },
      { id: 'tx_paid', shard: 1, changedMinutesAgo: 40, intent: 'succeeded' },
    ]);
    const before = w.index.get('tx_down')?.position;

    const report = await runReconciliation(w.deps, LIMITS);

    expect(report).toMatchObject({ checked: 1, fixed: 1, failed: 1 });
    expect(w.index.get('tx_down')?.position).toBe(before);
  });

  it('starts no check once its time is nearly out, leaving everything due for the next run', async () => {
    const w = world([{ id: 'tx_1', shard: 0, changedMinutesAgo: 30, intent: 'succeeded' }]);

    const report = await runWithDeadline(Date.now() + 1_000, () => runReconciliation(w.deps, LIMITS));

    expect(report).toEqual({ checked: 0, fixed: 0, open: 0, moved: 0, failed: 0, more: true });
    expect(w.processorCalls).toEqual([]);
    expect(w.table.get('tx_1')?.status).toBe('pending');
  });
});

describe('oldestDue', () => {
  const due = (svcTxId: string, minutes: number): DueTransaction => ({ svcTxId, position: `${minutesAgo(minutes)}#${svcTxId}` });

  it('merges the shards by sort key and keeps the oldest, saying whether a shard may hold more', () => {
    const shards = [[due('a', 50), due('c', 20)], [], [due('b', 30)]];

    expect(oldestDue(shards, 5)).toEqual({ items: [due('a', 50), due('b', 30), due('c', 20)], more: false });
    expect(oldestDue(shards, 2)).toEqual({ items: [due('a', 50), due('b', 30)], more: true });
  });
});
