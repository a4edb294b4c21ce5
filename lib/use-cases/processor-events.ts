/**
 * The half of the transaction lifecycle the card processor drives (interface-spec.md POST /webhooks/processor;
 * decisions.md §5, §6): a verified processor event moves its transaction, computes the fee split on success,
 * keeps the settlement bookkeeping, and notifies the partner's subscribed endpoints.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { setTimeout as sleep } from 'node:timers/promises';
import { errors } from '../domain/errors';
import { computeFees, feeSettingsOf } from '../domain/fees';
import { newId } from '../domain/ids';
import type { PaymentChange } from '../domain/ledger';
import { type PaymentUpdate, planPaymentUpdate, succeedsWith } from '../domain/payment-update';
import type { FeeBreakdown, Transaction, TransactionStatus } from '../domain/transaction';
import { deliveriesFor, partnerEventBody, type WebhookDelivery, type WebhookEndpoint } from '../domain/webhooks';
import { countMetric, logger } from '../observability';
import type { PayeeReader } from './ports/partner-readers';
import { type EventMoney, PAYMENT_INTENT_ID, type PaymentEvent, type Processor } from './ports/processor';

/** One event's update as written: the event applied, the transaction as read, what changes, who is told. */
export interface PaymentWrite {
  /** The processor's event and its type, recorded as applied. */
  eventId: string;
  eventType: string;
  /** The transaction as read: the write expects its `status` and `revision` unchanged. */
  transaction: Transaction;
  update: PaymentUpdate;
  /** The partner events the update emits, in its notices' order: each shared by its deliveries. */
  partnerEventIds: string[];
  deliveries: readonly WebhookDelivery[];
  now: string;
}

/**
 * `applied`; `duplicate`: the event was applied before (nothing written); `conflict`: the transaction changed
 * since it was read, or another write held it (nothing written; read it again and decide again).
 */
export type PaymentWriteOutcome = 'applied' | 'duplicate' | 'conflict';

/** The one write of an event's update, atomic (`lib/store/payment-updates.ts`). */
export interface PaymentUpdateWriter {
  writePaymentUpdate(write: PaymentWrite): Promise<PaymentWriteOutcome>;
}

/**
 * The ports that apply a payment event to its transaction ({@link applyPaymentEvent}): the processor's own event, or
 * the outcome an intent's state reports when the service asks (attach-intent, the reconciliation). Wired in
 * `lib/composition/`; tests may wrap them to inject faults.
 */
export interface PaymentEventDeps {
  transactions: { getTransaction(svcTxId: string): Promise<Transaction | undefined> };
  payees: PayeeReader;
  webhookEndpoints: { listWebhookEndpoints(partnerId: string): Promise<WebhookEndpoint[]> };
  payments: PaymentUpdateWriter;
  /** The configured `PROCESSOR_FEE_PERCENT` (decisions.md §6). */
  processorFeePercent: number;
  /**
   * Where its log lines go, with the event's and transaction's keys: by default the invocation's logger, whose keys
   * then stay for the rest of the request. A caller applying several events at once (the reconciliation) gives each
   * a child logger of its own, so no line carries another transaction's keys.
   */
  log?: Logger;
}

/** The ports of POST /webhooks/processor: the event's verification and its transaction found by intent, besides. */
export interface ProcessorEventDeps extends PaymentEventDeps {
  processor: Pick<Processor, 'verifyEvent'>;
  transactions: PaymentEventDeps['transactions'] & {
    getTransactionByPaymentIntent(paymentIntentId: string): Promise<Transaction | undefined>;
  };
}

/** `moved`: this event changed the transaction (now `status`); otherwise `status` is its current one. */
export interface PaymentEventOutcome {
  kind: 'transaction';
  svcTxId: string;
  status: TransactionStatus;
  moved: boolean;
}

export type ProcessorEventOutcome = { kind: 'ignored'; type: string } | PaymentEventOutcome;

/**
 * How many times an update is decided again after losing a race (another event or a settlement run changed the
 * transaction between the read and the write). Past it, a 500: the processor retries the event later.
 */
const MAX_MOVE_ATTEMPTS = 4;

/**
 * POST /webhooks/processor. Steps:
 *   1. verify the signature over the raw body, then read the event (400s; an unmapped type is ignored);
 *   2. the payment intent it is about (400 MISSING_INTENT_ID) and its transaction (404 PAYMENT_INTENT_NOT_FOUND);
 *   3. an event whose amount or currency cannot be the transaction's changes nothing and answers its status;
 *   4. decide the update (`planPaymentUpdate`): the status move the state machine allows, the reversal facts
 *      merged, the new ledger entries, the partner events; nothing new (a duplicate, a late or out-of-order
 *      event, a refund level or dispute already recorded) changes nothing and answers the current status;
 *   5. on a success, the fee split from the partner's and client's settings read now;
 *   6. one delivery per endpoint subscribed to each partner event;
 *   7. ATOMIC, one TransactWriteItems: the processed-event record, the conditional update of the transaction,
 *      its new entries, the deliveries (`lib/store/payment-updates.ts`).
 * A duplicate event writes nothing and answers the current status; a lost race goes back to step 4 with the
 * transaction read again. A refund or dispute of a payment that has not succeeded yet is recorded (answered
 * 200) and takes effect in the success's write.
 */
export async function handleProcessorEvent(
  deps: ProcessorEventDeps,
  request: { rawBody: string; signatureHeader: string | undefined },
): Promise<ProcessorEventOutcome> {
  const event = await deps.processor.verifyEvent(request.rawBody, request.signatureHeader);
  if (event.kind === 'ignored') {
    countMetric('ProcessorEventsIgnored');
    return { kind: 'ignored', type: event.type };
  }
  if (event.paymentIntentId === undefined) throw errors.missingIntentId();
  // An id that is not a payment intent's can be linked to nothing (and one past DynamoDB's key size would fail the read).
  if (!PAYMENT_INTENT_ID.test(event.paymentIntentId)) throw errors.paymentIntentNotFound();
  const transaction = await deps.transactions.getTransactionByPaymentIntent(event.paymentIntentId);
  if (transaction === undefined) throw errors.paymentIntentNotFound();
  return applyPaymentEvent(deps, event, transaction);
}

/**
 * Steps 3-7 of {@link handleProcessorEvent}, for an event about `transaction` as read: the one path every outcome
 * the processor reports takes, whether it sent the event or the service read the intent's state (attach-intent,
 * the reconciliation: decisions.md §12). Whichever comes first moves the transaction; the other finds nothing new
 * (the state machine, the revision condition and the processed-event record see to it) and changes nothing.
 */
export async function applyPaymentEvent(deps: PaymentEventDeps, event: PaymentEvent, read: Transaction): Promise<PaymentEventOutcome> {
  let transaction = read;
  const log = deps.log ?? logger;
  log.appendKeys({ processor_event_id: event.id, svc_tx_id: transaction.svcTxId, partner_id: transaction.partnerId });

  const change = event.change;
  const mismatch = change === null ? (unreadable(event.money) ?? 'the event states no money the service can read') : changeMismatch(event.money, change, transaction);
  if (mismatch !== undefined || change === null) {
    // The processor will never send this event differently: acknowledge it, move nothing, and raise it.
    log.error('Processor event does not match its transaction; nothing moved', { event_type: event.type, reason: mismatch });
    countMetric('ProcessorEventMismatches');
    return unchanged(transaction);
  }
  if (change.kind === 'dispute' && change.feeInOtherCurrency === true) {
    // The dispute moves its money; its fee, in the account's currency, is for an operator to charge (no guessed rate).
    log.error('Dispute fee in another currency than the dispute: not charged to the merchant', { event_type: event.type, dispute_id: change.dispute.id });
    countMetric('DisputeFeesNotCharged');
  }

  // What an update needs besides the transaction, read once: a lost race is about the transaction alone.
  let fees: FeeBreakdown | null = null;
  let endpoints: readonly WebhookEndpoint[] | undefined;
  for (let attempt = 1; ; attempt++) {
    // After a lost race a concurrent write may still hold the item (TransactionConflict): let it finish first.
    if (attempt > 1) await sleep(Math.random() * 10 * 2 ** attempt);
    const now = new Date().toISOString();
    // Only a success needs the split (read now, from the payee); anything else is decided at once, so a no-op
    // reads nothing more. A success always moves the status, so it is never a no-op.
    const needsFees = succeedsWith(transaction, change);
    // The payee and the endpoints in parallel: both are needed for a success.
    if (needsFees && fees === null) [fees, endpoints] = await Promise.all([feesOf(deps, transaction), endpoints ?? deps.webhookEndpoints.listWebhookEndpoints(transaction.partnerId)]);
    const update = planPaymentUpdate(transaction, change, needsFees ? fees : null, now);
    if (update === undefined) {
      log.info('Processor event changes nothing', { event_type: event.type, status: transaction.status });
      return unchanged(transaction);
    }
    endpoints ??= await deps.webhookEndpoints.listWebhookEndpoints(transaction.partnerId);
    const outcome = await writeUpdate(deps, { id: event.id, type: event.type }, transaction, update, endpoints, now);
    if (outcome === 'applied') {
      countUpdate(transaction, update);
      logReversalBeforeSuccess(log, transaction, change.kind);
      log.info('Transaction moved by processor event', { event_type: event.type, from: transaction.status, to: update.status, entries: update.entries.length });
      return { kind: 'transaction', svcTxId: transaction.svcTxId, status: update.status, moved: true };
    }
    const current = await deps.transactions.getTransaction(transaction.svcTxId);
    if (current === undefined) throw new Error(`transaction ${transaction.svcTxId} vanished while an event applied`);
    if (outcome === 'duplicate') return unchanged(current);
    if (attempt >= MAX_MOVE_ATTEMPTS) throw new Error(`transaction ${transaction.svcTxId}: the update lost ${attempt} races`);
    transaction = current;
  }
}

/**
 * A refund or dispute of a payment that has not succeeded is money the processor reports before the payment it
 * reverses: recorded, and counted, so an alarm can bring a payment that never succeeds to an operator.
 */
function logReversalBeforeSuccess(log: Logger, transaction: Transaction, kind: 'outcome' | 'refunds' | 'dispute') {
  if (kind === 'outcome' || transaction.fees !== null) return;
  log.warn('Refund or dispute recorded before its payment succeeded', { status: transaction.status });
  countMetric('ReversalsBeforeSuccess');
}

/** One metric per status a processor event moves a transaction to, and the ledger entries it writes. */
function countUpdate(transaction: Transaction, update: PaymentUpdate) {
  if (update.status !== transaction.status) {
    countMetric('TransactionsMoved');
    countMetric(MOVED_METRIC[update.status] ?? 'TransactionsMovedOther');
  }
  if (update.entries.length > 0) countMetric('LedgerEntriesWritten', update.entries.length);
}

/** `TransactionsSucceeded`, `TransactionsFailed` ... */
const MOVED_METRIC: Partial<Record<TransactionStatus, string>> = {
  succeeded: 'TransactionsSucceeded',
  failed: 'TransactionsFailed',
  abandoned: 'TransactionsAbandoned',
  refunded: 'TransactionsRefunded',
  chargeback: 'TransactionsChargedBack',
};

const unchanged = (transaction: Transaction): PaymentEventOutcome => ({
  kind: 'transaction',
  svcTxId: transaction.svcTxId,
  status: transaction.status,
  moved: false,
});

/** The reason an event's money cannot be read, or `undefined`. */
const unreadable = (money: EventMoney | undefined): string | undefined => (money !== undefined && !money.readable ? money.reason : undefined);

/**
 * Why an event cannot be about this transaction, or `undefined`: its currency (any event) and its amount (where the
 * event's amount is the payment's) must be the transaction's; a cumulative refund cannot pass the payment, nor its
 * disputes together (one dispute per charge at the processor; a second id disputing the rest is the most there is).
 */
function changeMismatch(money: EventMoney | undefined, change: PaymentChange, transaction: Transaction): string | undefined {
  const reason = unreadable(money);
  if (reason !== undefined) return reason;
  if (money?.readable === true) {
    if (money.currency !== transaction.currency) return `currency ${money.currency} is not the transaction's ${transaction.currency}`;
    if (money.amountMinor !== undefined && money.amountMinor !== transaction.amountMinor) {
      return `amount ${money.amountMinor} (minor units) is not the transaction's ${transaction.amountMinor}`;
    }
  }
  if (change.kind === 'refunds' && change.refundedMinor > transaction.amountMinor) return `amount_refunded ${change.refundedMinor} is more than the payment`;
  if (change.kind === 'dispute') {
    const others = transaction.reversals.disputes.filter((known) => known.id !== change.dispute.id && !(known.legacy === true && known.id === ''));
    if (others.reduce((sum, known) => sum + known.amountMinor, change.dispute.amountMinor) > transaction.amountMinor) return 'disputes larger than their payment';
  }
  return undefined;
}

/** Steps 6-7 for one reading of the transaction: each notice its own partner event, delivered to its subscribers. */
function writeUpdate(
  deps: PaymentEventDeps,
  event: { id: string; type: string },
  transaction: Transaction,
  update: PaymentUpdate,
  endpoints: readonly WebhookEndpoint[],
  now: string,
) {
  const partnerEventIds = update.notices.map(() => newId.partnerEvent());
  const deliveries = update.notices.flatMap((notice, i) =>
    deliveriesFor(endpoints, { eventId: partnerEventIds[i] as string, event: notice.event, transaction, payload: partnerEventBody(transaction, notice), now }, newId.webhookDelivery),
  );
  return deps.payments.writePaymentUpdate({ eventId: event.id, eventType: event.type, transaction, update, partnerEventIds, deliveries, now });
}

/** decisions.md §6, with the partner's and client's fee settings as they are when the payment succeeds. */
async function feesOf(deps: PaymentEventDeps, transaction: Transaction): Promise<FeeBreakdown> {
  const { partner, client } = await deps.payees.getPayee(transaction.partnerId, transaction.clientId);
  // Partners and clients are never deleted: a missing one is a broken invariant, not the processor's doing.
  if (partner === undefined || client === undefined) throw new Error(`transaction ${transaction.svcTxId}: its partner or client is missing`);
  return computeFees(transaction.amountMinor, transaction.currency, feeSettingsOf(deps.processorFeePercent, partner, client));
}
