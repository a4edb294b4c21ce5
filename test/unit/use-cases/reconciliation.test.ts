/**
 * The reconciliation run's selection, backoff, give-up, bounds and resumption (lib/use-cases/reconciliation.ts), over
 * in-memory ports: a sharded index that behaves as the sparse gsi4 does (keys at the next look's due time, a watch
 * started or ended by the write that moves a transaction, as lib/store/payment-updates.ts does), intents read (and
 * canceled, as Stripe does) by the processor adapter's own mapping (`intentOutcomeEvent`), and the processor event's
 * real path (`applyPaymentEvent`) writing into a map. No I/O, no clock but the one given.
 */
import { describe, expect, it } from '@jest/globals';
import { runWithDeadline } from '../../../lib/deadline';
import { NO_REVERSALS } from '../../../lib/domain/ledger';
import { currencyCode } from '../../../lib/domain/money';
import type { Client, Partner } from '../../../lib/domain/partner';
import { nextCheckDue, startWatch, watchOf } from '../../../lib/domain/reconciliation';
import type { Transaction, TransactionStatus } from '../../../lib/domain/transaction';
import { intentOutcomeEvent } from '../../../lib/processor/event-objects';
import type { PaymentIntent } from '../../../lib/use-cases/ports/processor';
import type { PaymentWrite } from '../../../lib/use-cases/processor-events';
import { type DueTransaction, oldestDue, type ReconciliationLimits, runReconciliation } from '../../../lib/use-cases/reconciliation';

const NOW = new Date('2026-11-27T12:00:00.000Z');
const minutesAgo = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000).toISOString();
const DAY_MINUTES = 24 * 60;
const LIMITS: ReconciliationLimits = { maxChecks: 100, concurrency: 2, giveUpAfterMs: 7 * DAY_MINUTES * 60_000 };
const SHARDS = 4;

const partner: Partner = { partnerId: 'ptr_1', name: 'P', status: 'active', kycStatus: 'approved', serviceFeePercentage: 1, rateLimitPerMinute: null, branding: null, createdAt: minutesAgo(999), updatedAt: minutesAgo(999) };
const client: Client = { id: 'cl_1', partnerId: 'ptr_1', clientId: 'merchant-1', legalName: 'M', status: 'active', partnerFeePercentage: null, partnerFeeFlatUsdCents: null, createdAt: minutesAgo(999), updatedAt: minutesAgo(999) };

type IntentState = 'open' | 'succeeded' | 'canceled' | 'declined' | 'processing' | 'unknown' | 'unavailable' | 'other_amount';

interface Seed {
  id: string;
  shard: number;
  /** Minutes since its watch began (the intent linked, or the failure). */
  changedMinutesAgo: number;
  intent: IntentState;
  status?: TransactionStatus;
}

/** A world of `transactions`; each in the index at its first look's due time (10 minutes after its watch began). */
function world(transactions: Seed[]) {
  const table = new Map<string, Transaction>();
  const index = new Map<string, { shard: number; position: string }>();
  const shardOf = new Map<string, number>();
  const intents = new Map<string, IntentState>();
  const writes: PaymentWrite[] = [];
  const processorCalls: string[] = [];
  const cancels: string[] = [];
  const place = (id: string, dueAt: string) => index.set(id, { shard: shardOf.get(id) ?? 0, position: `${dueAt}#${id}` });
  for (const { id, shard, changedMinutesAgo, intent, status = 'pending' } of transactions) {
    const changedAt = minutesAgo(changedMinutesAgo);
    const watch = startWatch(changedAt);
    table.set(id, {
      id: `rec_${id}`, svcTxId: id, partnerId: partner.partnerId, partnerName: 'P', clientId: client.clientId, clientName: 'M', partnerReference: `ref-${id}`,
      processorPaymentIntentId: `pi_${id}`, amountMinor: 1500, currency: currencyCode('USD'), status, settlementStatus: 'unsettled', fees: null,
      reversals: NO_REVERSALS, revision: 0, receiptEmail: null, statementDescriptorSuffix: null, meta: null, createdAt: changedAt, updatedAt: changedAt,
      reconciliation: watch.state,
    });
    shardOf.set(id, shard);
    place(id, watch.dueAt);
    intents.set(`pi_${id}`, intent);
  }
  const stripeStatus: Record<IntentState, Record<string, unknown>> = {
    open: { status: 'requires_payment_method', last_payment_error: null },
    succeeded: { status: 'succeeded' },
    canceled: { status: 'canceled' },
    declined: { status: 'requires_payment_method', last_payment_error: { code: 'card_declined' } },
    processing: { status: 'processing' },
    other_amount: { status: 'succeeded', amount: 999 },
    unknown: {},
    unavailable: {},
  };
  const intentAsIs = (id: string): PaymentIntent | undefined => {
    const state = intents.get(id);
    if (state === 'unavailable') throw new Error('the processor is unavailable');
    if (state === undefined || state === 'unknown') return undefined;
    const object: Record<string, unknown> = { id, object: 'payment_intent', amount: 1500, currency: 'usd', metadata: {}, ...stripeStatus[state] };
    return { id, status: String(object.status), amountMinor: object.amount as number, currency: currencyCode('USD'), clientSecret: '', metadata: {}, outcomeEvent: intentOutcomeEvent(object) };
  };
  const unchangedSince = (due: DueTransaction, revision: number) => index.get(due.svcTxId)?.position === due.position && table.get(due.svcTxId)?.revision === revision;
  const deps = {
    now: () => NOW,
    queue: {
      shards: SHARDS,
      listDue: async (shard: number, dueBy: string, limit: number): Promise<DueTransaction[]> =>
        [...index.entries()]
          .filter(([, entry]) => entry.shard === shard && entry.position <= `${dueBy}#\uffff`)
          .map(([svcTxId, entry]) => ({ svcTxId, position: entry.position, dueAt: entry.position.slice(0, entry.position.lastIndexOf('#')) }))
          .sort((a, b) => a.position.localeCompare(b.position))
          .slice(0, limit),
      reschedule: async (due: DueTransaction, revision: number, next: { dueAt: string; state: { since: string; checks: number } }) => {
        if (!unchangedSince(due, revision)) return false;
        place(due.svcTxId, next.dueAt);
        table.set(due.svcTxId, { ...table.get(due.svcTxId)!, reconciliation: next.state });
        return true;
      },
      stopWatching: async (due: DueTransaction, revision: number) => {
        if (!unchangedSince(due, revision)) return false;
        index.delete(due.svcTxId);
        table.set(due.svcTxId, { ...table.get(due.svcTxId)!, reconciliation: undefined });
        return true;
      },
    },
    processor: {
      retrievePaymentIntent: async (id: string) => {
        processorCalls.push(id);
        return intentAsIs(id);
      },
      // As Stripe: an open intent is canceled; one that succeeded, is processing or is canceled is refused, and the
      // adapter answers it as it is.
      cancelPaymentIntent: async (id: string) => {
        processorCalls.push(id);
        const state = intents.get(id);
        if (state === 'open' || state === 'declined') {
          cancels.push(id);
          intents.set(id, 'canceled');
        }
        return intentAsIs(id);
      },
    },
    paymentEvents: {
      transactions: { getTransaction: async (svcTxId: string) => table.get(svcTxId) },
      payees: { getPayee: async () => ({ partner, client }) },
      webhookEndpoints: { listWebhookEndpoints: async () => [] },
      payments: {
        // As the store's write: conditional on the revision; a status move starts a new watch, or ends it.
        writePaymentUpdate: async (write: PaymentWrite) => {
          const current = table.get(write.transaction.svcTxId);
          if (current?.revision !== write.transaction.revision) return 'conflict' as const;
          const moved: Transaction = { ...current, status: write.update.status, fees: write.update.fees, revision: current.revision + 1, updatedAt: write.now };
          if (write.update.status !== current.status) {
            const watch = watchOf(moved) === undefined ? undefined : startWatch(write.now);
            moved.reconciliation = watch?.state;
            if (watch === undefined) index.delete(current.svcTxId);
            else place(current.svcTxId, watch.dueAt);
          }
          table.set(current.svcTxId, moved);
          writes.push(write);
          return 'applied' as const;
        },
      },
      processorFeePercent: 2.9,
    },
  };
  /** The deps of a run `minutes` after NOW. */
  const at = (minutes: number) => ({ ...deps, now: () => new Date(NOW.getTime() + minutes * 60_000) });
  return { deps, at, table, index, writes, processorCalls, cancels, setIntent: (id: string, state: IntentState) => intents.set(`pi_${id}`, state) };
}

describe('runReconciliation', () => {
  it('asks only about transactions whose first look is due (10 minutes after the intent was linked), from every shard, the earliest due first', async () => {
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
    expect(report).toEqual({ checked: 3, fixed: 2, gaveUp: 0, open: 1, released: 0, moved: 0, failed: 0, more: false, backlog: 0, oldestDueAgeSeconds: 50 * 60 });
    expect([...w.table.values()].map((tx) => [tx.svcTxId, tx.status, tx.revision])).toEqual([
      ['tx_late', 'pending', 0],
      ['tx_recent', 'pending', 0],
      ['tx_oldest', 'succeeded', 1],
      ['tx_due', 'abandoned', 1],
    ]);
    expect(w.writes.map((write) => write.eventId)).toEqual(['intent_state_pi_tx_oldest_succeeded', 'intent_state_pi_tx_due_abandoned']);
  });

  it('applies a declined payment as failed through the event path, and backs off an intent the processor does not know', async () => {
    const w = world([
      { id: 'tx_declined', shard: 1, changedMinutesAgo: 20, intent: 'declined' },
      { id: 'tx_unknown', shard: 1, changedMinutesAgo: 25, intent: 'unknown' },
    ]);

    const report = await runReconciliation(w.deps, LIMITS);

    expect(report).toMatchObject({ checked: 2, fixed: 1, open: 1 });
    expect(w.table.get('tx_declined')).toMatchObject({ status: 'failed', revision: 1 });
    expect(w.writes[0]?.update.notices).toEqual([{ event: 'transaction_failed', status: 'failed' }]);
    expect(w.index.get('tx_unknown')?.position).toBe(`${nextCheckDue(NOW.toISOString(), 1)}#tx_unknown`);
    expect(w.table.get('tx_unknown')?.reconciliation).toEqual({ since: minutesAgo(25), checks: 1 });
  });

  it('checks at most maxChecks a run, the oldest across shards, and says more are due', async () => {
    const w = world([
      { id: 'tx_a', shard: 0, changedMinutesAgo: 50, intent: 'open' },
      { id: 'tx_b', shard: 1, changedMinutesAgo: 40, intent: 'open' },
      { id: 'tx_c', shard: 0, changedMinutesAgo: 30, intent: 'succeeded' },
      { id: 'tx_d', shard: 3, changedMinutesAgo: 20, intent: 'succeeded' },
    ]);

    const report = await runReconciliation(w.deps, { ...LIMITS, maxChecks: 2 });

    expect(report).toEqual({ checked: 2, fixed: 0, gaveUp: 0, open: 2, released: 0, moved: 0, failed: 0, more: true, backlog: 2, oldestDueAgeSeconds: 40 * 60 });
    expect(w.processorCalls.sort()).toEqual(['pi_tx_a', 'pi_tx_b']);
  });

  it('resumes where the last run stopped: payments the processor still holds open go to the back and never starve the others', async () => {
    // Arrange: the two oldest stay open at the processor for ever
    const w = world([
      { id: 'tx_open1', shard: 0, changedMinutesAgo: 50, intent: 'open' },
      { id: 'tx_open2', shard: 1, changedMinutesAgo: 40, intent: 'open' },
      { id: 'tx_paid', shard: 2, changedMinutesAgo: 30, intent: 'succeeded' },
    ]);

    // Act: runs of two checks, 15 minutes apart
    const first = await runReconciliation(w.deps, { ...LIMITS, maxChecks: 2 });
    const second = await runReconciliation(w.at(15), { ...LIMITS, maxChecks: 2 });

    // Assert
    expect(first).toMatchObject({ checked: 2, fixed: 0, more: true });
    expect(second).toMatchObject({ fixed: 1 });
    expect(w.table.get('tx_paid')).toMatchObject({ status: 'succeeded', revision: 1 });
    expect(w.processorCalls.slice(0, 3)).toEqual(expect.arrayContaining(['pi_tx_open1', 'pi_tx_open2', 'pi_tx_paid']));
  });

  it('backs off each open intent: looks 20, 40, 80 … minutes after the last, then a day apart (12 looks in 6 days of runs every 15 minutes)', async () => {
    const w = world([{ id: 'tx_open', shard: 1, changedMinutesAgo: 10, intent: 'open' }]);

    const looks: number[] = [];
    for (let minute = 0; minute < 6 * DAY_MINUTES; minute += 15) {
      const report = await runReconciliation(w.at(minute), LIMITS);
      if (report.checked > 0) looks.push(minute);
    }

    expect(looks).toEqual([0, 30, 75, 165, 330, 660, 1305, 2595, 4035, 5475, 6915, 8355]);
    expect(w.table.get('tx_open')).toMatchObject({ status: 'pending', reconciliation: { since: minutesAgo(10), checks: 12 } });
  });

  it("checks a new payment at the first run after its first look is due, however many intents the processor holds open", async () => {
    // Arrange: 400 intents held open, made through the first day; a payment made two days on whose events are lost
    const w = world([
      ...Array.from({ length: 400 }, (_, i): Seed => ({ id: `tx_open${String(i).padStart(3, '0')}`, shard: i % SHARDS, changedMinutesAgo: -((i * 7) % DAY_MINUTES), intent: 'open' })),
      { id: 'tx_new', shard: 2, changedMinutesAgo: -2 * DAY_MINUTES, intent: 'succeeded' },
    ]);
    const limits = { ...LIMITS, maxChecks: 50 };

    // Act: runs every 15 minutes, up to the one before its first look is due (10 minutes after it was made), then that one
    for (let minute = 0; minute <= 2 * DAY_MINUTES; minute += 15) await runReconciliation(w.at(minute), limits);
    const before = w.table.get('tx_new')?.status;
    const report = await runReconciliation(w.at(2 * DAY_MINUTES + 15), limits);

    // Assert: open intents cost a look a day by now, so the run has room for it (round-robin re-checks would not)
    expect(before).toBe('pending');
    expect(report).toMatchObject({ fixed: 1, more: false, backlog: 0 });
    expect(w.table.get('tx_new')).toMatchObject({ status: 'succeeded', revision: 1 });
  });

  it('gives up on a payment open for the give-up period: cancels its intent and applies the cancellation (abandoned)', async () => {
    const w = world([
      { id: 'tx_forgotten', shard: 0, changedMinutesAgo: 7 * DAY_MINUTES, intent: 'open' },
      { id: 'tx_young', shard: 0, changedMinutesAgo: 7 * DAY_MINUTES - 1, intent: 'open' },
    ]);

    const report = await runReconciliation(w.deps, LIMITS);

    expect(report).toMatchObject({ checked: 2, gaveUp: 1, fixed: 0, open: 1 });
    expect(w.cancels).toEqual(['pi_tx_forgotten']);
    expect(w.table.get('tx_forgotten')).toMatchObject({ status: 'abandoned', revision: 1 });
    expect(w.writes.map((write) => write.eventId)).toEqual(['intent_state_pi_tx_forgotten_abandoned']);
    expect(w.index.has('tx_forgotten')).toBe(false);
    expect(w.table.get('tx_young')).toMatchObject({ status: 'pending', revision: 0 });
  });

  it('at the give-up, applies what an intent the processor would not cancel has: a success, or a payment still processing looked at again later', async () => {
    const w = world([
      { id: 'tx_paid', shard: 0, changedMinutesAgo: 8 * DAY_MINUTES, intent: 'succeeded' },
      { id: 'tx_processing', shard: 1, changedMinutesAgo: 8 * DAY_MINUTES, intent: 'processing' },
    ]);

    const report = await runReconciliation(w.deps, LIMITS);

    expect(report).toMatchObject({ checked: 2, gaveUp: 0, fixed: 1, open: 1 });
    expect(w.cancels).toEqual([]);
    expect(w.table.get('tx_paid')).toMatchObject({ status: 'succeeded', revision: 1 });
    expect(w.table.get('tx_processing')).toMatchObject({ status: 'pending', reconciliation: { checks: 1 } });
    expect(w.index.get('tx_processing')?.position).toBe(`${nextCheckDue(NOW.toISOString(), 1)}#tx_processing`);
  });

  it('backs off an outcome that cannot be its transaction\'s (another amount) instead of looking again every run', async () => {
    const w = world([{ id: 'tx_mismatch', shard: 3, changedMinutesAgo: 30, intent: 'other_amount' }]);

    const first = await runReconciliation(w.deps, LIMITS);
    const next = await runReconciliation(w.at(15), LIMITS);

    expect(first).toMatchObject({ checked: 1, fixed: 0, open: 1 });
    expect(next).toMatchObject({ checked: 0 });
    expect(w.table.get('tx_mismatch')).toMatchObject({ status: 'pending', revision: 0, reconciliation: { checks: 1 } });
    expect(w.writes).toEqual([]);
  });

  it('watches a failed payment for 72 hours: a retry that succeeded is applied, a decline looked at again later, then it leaves the index', async () => {
    const w = world([
      { id: 'tx_retried', shard: 0, changedMinutesAgo: 60, intent: 'succeeded', status: 'failed' },
      { id: 'tx_declined', shard: 1, changedMinutesAgo: 60, intent: 'declined', status: 'failed' },
      { id: 'tx_old_failure', shard: 2, changedMinutesAgo: 72 * 60, intent: 'succeeded', status: 'failed' },
    ]);

    const report = await runReconciliation(w.deps, LIMITS);

    expect(report).toMatchObject({ checked: 2, fixed: 1, open: 1, released: 1 });
    expect(w.table.get('tx_retried')).toMatchObject({ status: 'succeeded', revision: 1 });
    expect(w.index.has('tx_retried')).toBe(false);
    expect(w.table.get('tx_declined')).toMatchObject({ status: 'failed', revision: 0, reconciliation: { checks: 1 } });
    expect(w.index.has('tx_old_failure')).toBe(false);
    expect(w.processorCalls).not.toContain('pi_tx_old_failure');
  });

  it('keeps a payment it moves to failed in the index, its new watch starting then', async () => {
    const w = world([{ id: 'tx_declined', shard: 1, changedMinutesAgo: 20, intent: 'declined' }]);

    await runReconciliation(w.deps, LIMITS);

    expect(w.table.get('tx_declined')).toMatchObject({ status: 'failed', reconciliation: { checks: 0 } });
    expect(w.index.has('tx_declined')).toBe(true);
  });

  it('is idempotent: a second run, or one after the event came, moves nothing again', async () => {
    const w = world([{ id: 'tx_1', shard: 0, changedMinutesAgo: 30, intent: 'succeeded' }]);

    const first = await runReconciliation(w.deps, LIMITS);
    const second = await runReconciliation(w.deps, LIMITS);

    expect(first).toMatchObject({ fixed: 1 });
    expect(second).toEqual({ checked: 0, fixed: 0, gaveUp: 0, open: 0, released: 0, moved: 0, failed: 0, more: false, backlog: 0, oldestDueAgeSeconds: 0 });
    expect(w.writes).toHaveLength(1);
  });

  it('counts a check the processor could not answer as failed, keeps its place for the next run, and goes on with the others', async () => {
    const w = world([
      { id: 'tx_down', shard: 0, changedMinutesAgo: 50, intent: 'unavailable' },
      { id: 'tx_paid', shard: 1, changedMinutesAgo: 40, intent: 'succeeded' },
    ]);
    const before = w.index.get('tx_down')?.position;

    const report = await runReconciliation(w.deps, LIMITS);

    expect(report).toMatchObject({ checked: 1, fixed: 1, failed: 1, more: true, backlog: 1 });
    expect(w.index.get('tx_down')?.position).toBe(before);
  });

  it('starts no check once its time is nearly out, leaving everything due for the next run', async () => {
    const w = world([{ id: 'tx_1', shard: 0, changedMinutesAgo: 30, intent: 'succeeded' }]);

    const report = await runWithDeadline(Date.now() + 1_000, () => runReconciliation(w.deps, LIMITS));

    expect(report).toEqual({ checked: 0, fixed: 0, gaveUp: 0, open: 0, released: 0, moved: 0, failed: 0, more: true, backlog: 1, oldestDueAgeSeconds: 20 * 60 });
    expect(w.processorCalls).toEqual([]);
    expect(w.table.get('tx_1')?.status).toBe('pending');
  });
});

describe('oldestDue', () => {
  const due = (svcTxId: string, minutes: number): DueTransaction => ({ svcTxId, position: `${minutesAgo(minutes)}#${svcTxId}`, dueAt: minutesAgo(minutes) });

  it('merges the shards by sort key and keeps the oldest, saying whether a shard may hold more', () => {
    const shards = [[due('a', 50), due('c', 20)], [], [due('b', 30)]];

    expect(oldestDue(shards, 5)).toEqual({ items: [due('a', 50), due('b', 30), due('c', 20)], more: false });
    expect(oldestDue(shards, 2)).toEqual({ items: [due('a', 50), due('b', 30)], more: true });
  });
});

describe('runReconciliation’s logging', () => {
  it('leaves no transaction’s keys on the invocation’s logger: each check logs through a logger of its own', async () => {
    const { logger } = await import('../../../lib/observability');
    const w = world([
      { id: 'tx_log_a', shard: 0, changedMinutesAgo: 30, intent: 'succeeded' },
      { id: 'tx_log_b', shard: 1, changedMinutesAgo: 30, intent: 'succeeded' },
    ]);
    const lines: Array<Record<string, unknown>> = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string | Uint8Array) => {
      for (const line of String(chunk).split('\n').filter((text) => text.startsWith('{'))) lines.push(JSON.parse(line) as Record<string, unknown>);
      return true;
    }) as typeof process.stdout.write;
    logger.setLogLevel('INFO');
    try {
      const report = await runReconciliation(w.deps, { ...LIMITS, concurrency: 2 });
      logger.info('after the run');
      expect(report.fixed).toBe(2);
    } finally {
      logger.setLogLevel('SILENT');
      process.stdout.write = write;
    }

    // Each check's lines carry its own transaction; the invocation's logger carries none after the run
    const moved = lines.filter((line) => line.message === 'Transaction moved by processor event');
    expect(moved.map((line) => line.svc_tx_id).sort()).toEqual(['tx_log_a', 'tx_log_b']);
    expect(lines.find((line) => line.message === 'after the run')).not.toHaveProperty('svc_tx_id');
  });
});
