/**
 * The half of the transaction lifecycle the card processor drives (interface-spec.md POST /webhooks/processor;
 * decisions.md §5, §6): a verified processor event moves its transaction, computes the fee split on success,
 * keeps the settlement bookkeeping, and notifies the partner's subscribed endpoints.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { errors } from '../domain/errors';
import { computeFees, feeSettingsOf } from '../domain/fees';
import { newId } from '../domain/ids';
import { canMove, settlementEffectOf, type FeeBreakdown, type Transaction, type TransactionStatus } from '../domain/transaction';
import { deliveriesFor, partnerEventBody, partnerEventFor, type EventStatus, type WebhookEndpoint } from '../domain/webhooks';
import { countMetric, logger } from '../observability';
import { type EventMoney, PAYMENT_INTENT_ID, type Processor } from '../processor/port';
import type * as payees from '../store/payees';
import type * as moves from '../store/transaction-moves';
import type * as transactions from '../store/transactions';
import type * as webhookEndpoints from '../store/webhook-endpoints';

/** The adapters this use case calls, wired in `lib/adapters/`; tests may wrap them to inject faults. */
export interface ProcessorEventDeps {
  processor: Pick<Processor, 'verifyEvent'>;
  transactions: Pick<typeof transactions, 'getTransaction' | 'getTransactionByPaymentIntent'>;
  payees: Pick<typeof payees, 'getPayee'>;
  webhookEndpoints: Pick<typeof webhookEndpoints, 'listWebhookEndpoints'>;
  moves: Pick<typeof moves, 'applyTransactionMove'>;
  /** The configured `PROCESSOR_FEE_PERCENT` (decisions.md §6). */
  processorFeePercent: number;
}

export type ProcessorEventOutcome =
  | { kind: 'ignored'; type: string }
  /** `moved`: this event moved the transaction to `status`; otherwise `status` is its current one. */
  | { kind: 'transaction'; svcTxId: string; status: TransactionStatus; moved: boolean };

/**
 * How many times a move is decided again after losing a race (another event or a settlement run changed the
 * transaction between the read and the write). Past it, a 500: the processor retries the event later.
 */
const MAX_MOVE_ATTEMPTS = 4;

/**
 * POST /webhooks/processor. Steps:
 *   1. verify the signature over the raw body, then read the event (400s; an unmapped type is ignored);
 *   2. the payment intent it is about (400 MISSING_INTENT_ID) and its transaction (404 PAYMENT_INTENT_NOT_FOUND);
 *   3. decide: an event whose amount or currency is not the transaction's, a partial refund, or a move the
 *      state machine does not allow changes nothing and answers the current status;
 *   4. on a move to succeeded, the fee split from the partner's and client's settings read now;
 *   5. one delivery per endpoint subscribed to the move's partner event;
 *   6. ATOMIC, one TransactWriteItems: the processed-event record, the conditional move with its fees and
 *      settlement bookkeeping, the adjustment of a settled transaction, the deliveries (`transaction-moves.ts`).
 * A duplicate event writes nothing and answers the current status; a lost race goes back to step 3 with the
 * transaction read again.
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
  let transaction = await deps.transactions.getTransactionByPaymentIntent(event.paymentIntentId);
  if (transaction === undefined) throw errors.paymentIntentNotFound();
  logger.appendKeys({ processor_event_id: event.id, svc_tx_id: transaction.svcTxId, partner_id: transaction.partnerId });

  const mismatch = moneyMismatch(event.money, transaction);
  if (mismatch !== undefined) {
    // The processor will never send this event differently: acknowledge it, move nothing, and raise it.
    logger.error('Processor event does not match its transaction; nothing moved', { event_type: event.type, reason: mismatch });
    countMetric('ProcessorEventMismatches');
    return unchanged(transaction);
  }
  if (event.status === null) return unchanged(transaction);
  const to = event.status;

  // What a move needs besides the transaction, read once (in parallel): a lost race is about the transaction alone.
  const [fees, endpoints] = canMove(transaction.status, to)
    ? await Promise.all([to === 'succeeded' ? feesOf(deps, transaction) : null, deps.webhookEndpoints.listWebhookEndpoints(transaction.partnerId)])
    : [null, []];
  for (let attempt = 1; ; attempt++) {
    if (!canMove(transaction.status, to)) {
      // A duplicate or late event (decisions.md §5: nothing changes). A refund or dispute of a payment still
      // `pending` is money at risk (the processor will not send it again): logged as a warning and counted, so
      // an alarm can bring it to an operator.
      const refusedWhilePending = transaction.status === 'pending' && (to === 'refunded' || to === 'chargeback');
      logger[refusedWhilePending ? 'warn' : 'info']('Processor event moves nothing', { event_type: event.type, from: transaction.status, to });
      if (refusedWhilePending) countMetric('ReversalsBeforeSuccess');
      return unchanged(transaction);
    }
    // After a lost race a concurrent write may still hold the item (TransactionConflict): let it finish first.
    if (attempt > 1) await sleep(Math.random() * 10 * 2 ** attempt);
    const outcome = await applyMove(deps, { id: event.id, type: event.type }, transaction, to, { fees, endpoints });
    if (outcome === 'applied') {
      countMetric('TransactionsMoved');
      countMetric(MOVED_METRIC[to]);
      logger.info('Transaction moved by processor event', { event_type: event.type, from: transaction.status, to });
      return { kind: 'transaction', svcTxId: transaction.svcTxId, status: to, moved: true };
    }
    const current = await deps.transactions.getTransaction(transaction.svcTxId);
    if (current === undefined) throw new Error(`transaction ${transaction.svcTxId} vanished while an event applied`);
    if (outcome === 'duplicate') return unchanged(current);
    if (attempt >= MAX_MOVE_ATTEMPTS) throw new Error(`transaction ${transaction.svcTxId}: the move to ${to} lost ${attempt} races`);
    transaction = current;
  }
}

/** One metric per status a processor event moves a transaction to: `TransactionsSucceeded`, `TransactionsFailed` ... */
const MOVED_METRIC: Record<EventStatus, string> = {
  succeeded: 'TransactionsSucceeded',
  failed: 'TransactionsFailed',
  abandoned: 'TransactionsAbandoned',
  refunded: 'TransactionsRefunded',
  chargeback: 'TransactionsChargedBack',
};

const unchanged = (transaction: Transaction): ProcessorEventOutcome => ({
  kind: 'transaction',
  svcTxId: transaction.svcTxId,
  status: transaction.status,
  moved: false,
});

/**
 * Why an event cannot be about this transaction, or `undefined`: its currency (any event) and its amount (where
 * the event's amount is the payment's) must be the transaction's.
 */
function moneyMismatch(money: EventMoney | undefined, transaction: Transaction): string | undefined {
  if (money === undefined) return undefined;
  if (!money.readable) return money.reason;
  if (money.currency !== transaction.currency) return `currency ${money.currency} is not the transaction's ${transaction.currency}`;
  if (money.amountMinor !== undefined && money.amountMinor !== transaction.amountMinor) {
    return `amount ${money.amountMinor} (minor units) is not the transaction's ${transaction.amountMinor}`;
  }
  return undefined;
}

/** Steps 4-6 for one reading of the transaction. */
async function applyMove(
  deps: ProcessorEventDeps,
  event: { id: string; type: string },
  transaction: Transaction,
  to: EventStatus,
  read: { fees: FeeBreakdown | null; endpoints: readonly WebhookEndpoint[] },
): Promise<moves.MoveOutcome> {
  const now = new Date().toISOString();
  const { fees, endpoints } = read;
  const partnerEventId = newId.partnerEvent();
  const partnerEvent = partnerEventFor(to);
  const deliveries = deliveriesFor(
    endpoints,
    { eventId: partnerEventId, event: partnerEvent, transaction, payload: partnerEventBody(transaction, partnerEvent, to), now },
    newId.webhookDelivery,
  );
  return deps.moves.applyTransactionMove({
    eventId: event.id,
    eventType: event.type,
    transaction,
    to,
    fees,
    settlement: settlementEffectOf(transaction, to, now),
    partnerEventId,
    deliveries,
    now,
  });
}

/** decisions.md §6, with the partner's and client's fee settings as they are when the payment succeeds. */
async function feesOf(deps: ProcessorEventDeps, transaction: Transaction): Promise<FeeBreakdown> {
  const { partner, client } = await deps.payees.getPayee(transaction.partnerId, transaction.clientId);
  // Partners and clients are never deleted: a missing one is a broken invariant, not the processor's doing.
  if (partner === undefined || client === undefined) throw new Error(`transaction ${transaction.svcTxId}: its partner or client is missing`);
  return computeFees(transaction.amountMinor, transaction.currency, feeSettingsOf(deps.processorFeePercent, partner, client));
}
