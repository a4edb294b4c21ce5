/**
 * Partner use cases for payment collection: the one-call checkout intent, the legacy initialize + attach,
 * and transaction reads (interface-spec.md Endpoints; decisions.md §4-5).
 */
import { errors, fieldValidationError, formValidationError, type ServiceError } from '../domain/errors';
import { countMetric, logger } from '../observability';
import type { CurrencyCode } from '../domain/money';
import { newId, svcTxIdOf } from '../domain/ids';
import type { KnownPayee, Partner } from '../domain/partner';
import {
  assertClientCanTakePayment,
  assertPartnerCanTakePayment,
  awaitsProcessor,
  type Transaction,
  type TransactionFilters,
} from '../domain/transaction';
import { assertActsFor, type Caller, type IdempotencyScope } from '../domain/caller';
import type { FoldedCompletion } from '../domain/idempotency';
import { type PaymentIntent, type PaymentParameter, type Processor, ProcessorRefusedParameter } from './ports/processor';
import type { ClientReader, PayeeReader } from './ports/partner-readers';
import { IntentAlreadyLinked, TransactionExists, type TransactionStore, TransactionStateConflict } from './ports/transaction-store';
import { NO_REVERSALS } from '../domain/ledger';
import { applyPaymentEvent, type PaymentEventDeps } from './processor-events';

/**
 * The adapters these use cases call, wired once in `lib/composition/` (the composition point); tests may wrap
 * them to inject faults.
 */
export interface TransactionDeps {
  processor: Processor;
  transactions: TransactionStore;
  clients: ClientReader;
  payees: PayeeReader;
  /** Where an intent's outcome, read at attach, is applied: the processor event's own path. */
  paymentEvents: PaymentEventDeps;
}

/** The adapters of the use cases that never call the processor (so their functions bundle no processor SDK). */
export type TransactionStoreDeps = Omit<TransactionDeps, 'processor' | 'paymentEvents'>;

/** The branding packet's adapters: the payees, and of the processor only its publishable key. */
export interface BrandingDeps {
  processor: Pick<Processor, 'publishableKey'>;
  payees: TransactionDeps['payees'];
}

/**
 * `deps` that answer reads of `known` (the payee a request's body named, read with its API key) from it instead
 * of the table: the same strongly consistent values, read once. Reads of any other payee go to the table.
 */
export function withKnownPayee<D extends TransactionStoreDeps>(deps: D, known: KnownPayee | undefined): D {
  if (known === undefined) return deps;
  const isKnown = (partnerId: string, clientId: string) => partnerId === known.partnerId && clientId === known.clientId;
  return {
    ...deps,
    clients: { getClient: async (partnerId, clientId) => (isKnown(partnerId, clientId) ? known.client : deps.clients.getClient(partnerId, clientId)) },
    payees: {
      getPayee: async (partnerId, clientId) =>
        isKnown(partnerId, clientId) ? { partner: known.partner, client: known.client } : deps.payees.getPayee(partnerId, clientId),
    },
  };
}

export interface NewTransaction {
  partnerId: string;
  clientId: string;
  amountMinor: number;
  currency: CurrencyCode;
  partnerReference: string;
  meta: Record<string, unknown> | undefined;
}

export interface NewCheckout extends NewTransaction {
  email: string;
  statementDescriptorSuffix: string | undefined;
}

/** The idempotency scope of the request (from the chain), which a transaction-creating attempt is keyed by. */
export type AttemptScope = IdempotencyScope;

/**
 * The partner the request acts for: a partner key acts for its own partner only (403 for another, decisions.md
 * §5); a platform key names any partner. Then the payment gate: partner found, active, KYC approved; client
 * found (under that partner: another partner's client is 404), active.
 */
async function resolvePayee(deps: TransactionStoreDeps, caller: Caller, partnerId: string, clientId: string) {
  assertActsFor(caller, partnerId);
  // A partner key brought its partner already; a platform key reads partner and client in one BatchGet.
  const payee =
    caller.kind === 'partner'
      ? { partner: caller.partner, client: await deps.clients.getClient(partnerId, clientId) }
      : await deps.payees.getPayee(partnerId, clientId);
  const { partner, client } = payee;
  logger.appendKeys({ partner_id: partnerId, client_id: clientId });
  assertPartnerCanTakePayment(partner);
  assertClientCanTakePayment(client);
  return { partner, client };
}

function newTransaction(
  input: NewTransaction,
  payee: Awaited<ReturnType<typeof resolvePayee>>,
  fields: Pick<Transaction, 'svcTxId' | 'status' | 'processorPaymentIntentId' | 'receiptEmail' | 'statementDescriptorSuffix'>,
): Transaction {
  const now = new Date().toISOString();
  return {
    id: newId.transactionRecord(),
    ...fields,
    partnerId: payee.partner.partnerId,
    partnerName: payee.partner.name,
    clientId: payee.client.clientId,
    clientName: payee.client.legalName,
    partnerReference: input.partnerReference,
    amountMinor: input.amountMinor,
    currency: input.currency,
    settlementStatus: 'unsettled',
    fees: null,
    reversals: NO_REVERSALS,
    revision: 0,
    meta: input.meta ?? null,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * How a route answers a use case's result, as the idempotent answer stored in the same write that creates it
 * (the chain's `idempotency.answer`): given, the use case writes it with the transaction.
 */
export type Answer<R> = (result: R) => FoldedCompletion;

export interface CheckoutResult {
  partner: Partner;
  transaction: Transaction;
  intent: PaymentIntent;
  publishableKey: string;
}

/**
 * POST /transactions/checkout-intent. Steps:
 *   1. the payment gate (partner and client checks), and both processor keys configured;
 *   2. the attempt's `svc_tx_id`, derived from the request's idempotency scope (`svcTxIdOf`: a retry of the
 *      same attempt gets the same one, with no write);
 *   3. create the processor intent with an idempotency key derived from that `svc_tx_id` (a retry after a
 *      crash between steps 3 and 4 gets the same intent back);
 *   4. write the pending transaction and the intent link atomically (one TransactWriteItems); if a previous
 *      attempt already wrote them, that transaction is the result.
 */
export async function createCheckoutIntent(
  deps: TransactionDeps,
  caller: Caller,
  input: NewCheckout,
  attempt: AttemptScope,
  answer?: Answer<CheckoutResult>,
): Promise<CheckoutResult> {
  const payee = await resolvePayee(deps, caller, input.partnerId, input.clientId);
  const publishableKey = await deps.processor.publishableKey();
  const svcTxId = svcTxIdOf(attempt);
  const intent = await answeringRefusals(deps.processor.createPaymentIntent({
    svcTxId,
    amountMinor: input.amountMinor,
    currency: input.currency,
    receiptEmail: input.email,
    statementDescriptorSuffix: input.statementDescriptorSuffix,
    metadata: {
      svc_tx_id: svcTxId,
      partner_id: payee.partner.partnerId,
      client_id: payee.client.clientId,
      partner_reference: input.partnerReference,
    },
  }));
  const transaction = newTransaction(input, payee, {
    svcTxId,
    status: 'pending',
    processorPaymentIntentId: intent.id,
    receiptEmail: input.email,
    statementDescriptorSuffix: input.statementDescriptorSuffix ?? null,
  });
  const created: CheckoutResult = { partner: payee.partner, transaction, intent, publishableKey };
  const written = await writeOnce(deps, transaction, answer?.(created));
  if (written.processorPaymentIntentId === intent.id) return { ...created, transaction: written };
  // An earlier try wrote this transaction with another intent: the processor forgot the idempotency key that
  // would have given the same intent back (its keys expire after 24 h; a sandbox's state was wiped). The stored
  // transaction and its own intent are the answer; the new intent is linked to nothing, so it can take no payment.
  const stored = written.processorPaymentIntentId === null ? undefined : await answeringRefusals(deps.processor.retrievePaymentIntent(written.processorPaymentIntentId));
  if (stored === undefined) throw errors.processorIntentMissing();
  return { partner: payee.partner, transaction: written, intent: stored, publishableKey };
}

/**
 * Writes the attempt's transaction (with `completion`, the request's idempotent answer in the same write); if an
 * earlier try of the same attempt already wrote it (it crashed before answering), that transaction is the result:
 * one attempt, one transaction.
 */
async function writeOnce(deps: TransactionStoreDeps, transaction: Transaction, completion?: FoldedCompletion): Promise<Transaction> {
  logger.appendKeys({ svc_tx_id: transaction.svcTxId });
  try {
    const created = await deps.transactions.createTransaction(transaction, completion);
    logger.info('Transaction created', { status: created.status, currency: created.currency, amount_minor: created.amountMinor });
    countMetric('TransactionsCreated');
    return created;
  } catch (error) {
    if (error instanceof IntentAlreadyLinked) throw intentAlreadyLinked();
    if (!(error instanceof TransactionExists)) throw error;
    const existing = await deps.transactions.getTransaction(transaction.svcTxId);
    if (existing === undefined) throw error;
    return existing;
  }
}

/**
 * POST /transactions/initialize (legacy): the payment gate; the attempt's `svc_tx_id` derived from the
 * request's idempotency scope (so a retry after a crash cannot make a second transaction); one conditional
 * write. No processor call.
 */
export async function initializeTransaction(
  deps: TransactionStoreDeps,
  caller: Caller,
  input: NewTransaction,
  attempt: AttemptScope,
  answer?: Answer<Transaction>,
): Promise<Transaction> {
  const payee = await resolvePayee(deps, caller, input.partnerId, input.clientId);
  const svcTxId = svcTxIdOf(attempt);
  const transaction = newTransaction(input, payee, { svcTxId, status: 'initialized', processorPaymentIntentId: null, receiptEmail: null, statementDescriptorSuffix: null });
  return writeOnce(deps, transaction, answer?.(transaction));
}

const invalidIntent = (message: string, summary = message) => fieldValidationError('processor_payment_intent_id', message, summary);

/** The store refused the intent's link: it belongs to another transaction. The caller named it in this field. */
const intentAlreadyLinked = () => invalidIntent('This payment intent is already linked to another transaction', 'Payment intent already linked');

/** The request's field each value the processor may refuse came from. */
const FIELD_OF_PARAMETER: Record<PaymentParameter, string> = {
  amount: 'amount',
  currency: 'currency',
  receiptEmail: 'email',
  statementDescriptorSuffix: 'statement_descriptor_suffix',
  'metadata.partner_reference': 'partner_reference',
  'metadata.partner_id': 'partner_id',
  'metadata.client_id': 'client_id',
  paymentIntentId: 'processor_payment_intent_id',
};

/**
 * A value the processor will not take is the partner's to fix (decisions.md §3: no 500 for caller input): 400
 * VALIDATION_ERROR on the field it came from, or on the form when the processor did not say which. The processor's
 * own words are quoted as its; a value the adapter could not express at the processor says why in its own.
 */
function refusalAsValidation(refusal: ProcessorRefusedParameter): ServiceError {
  const byProcessor = refusal.refusedBy === 'processor';
  const message = byProcessor ? `Refused by the card processor: ${refusal.message}` : refusal.message;
  if (refusal.parameter === undefined) return formValidationError(message);
  return fieldValidationError(FIELD_OF_PARAMETER[refusal.parameter], message, byProcessor ? 'The card processor refused the request' : message);
}

/** `call`'s result, its {@link ProcessorRefusedParameter} answered as the partner's validation error. */
async function answeringRefusals<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof ProcessorRefusedParameter) throw refusalAsValidation(error);
    throw error;
  }
}

/** A transaction the caller may see: its own partner's, or any for a platform key; else 404 TX_NOT_FOUND. */
async function visibleTransaction(
  store: Pick<TransactionDeps['transactions'], 'getTransaction'>,
  caller: Caller,
  svcTxId: string,
): Promise<Transaction> {
  const transaction = await store.getTransaction(svcTxId);
  if (transaction === undefined) throw errors.txNotFound();
  if (caller.kind === 'partner' && transaction.partnerId !== caller.partner.partnerId) throw errors.txNotFound();
  // Only an id that is the caller's own transaction becomes a log key: a caller's free text or another partner's
  // id never lands on a line that searches by `svc_tx_id` would find.
  logger.appendKeys({ svc_tx_id: svcTxId });
  return transaction;
}

/**
 * POST /transactions/attach-intent (legacy). Steps: the transaction (404 TX_NOT_FOUND); the payment gate again
 * (a partner suspended since `initialize` takes no payment); the intent must exist at the processor and match
 * the transaction's amount and currency, and its `svc_tx_id`/`partner_id` metadata, where present, must name
 * this transaction and its partner (400 VALIDATION_ERROR: an intent made for another transaction or partner
 * cannot be taken over by someone who knows its id and amount, and answers as one that does not exist); then:
 *   1. ATOMIC: initialized -> pending and the intent link in one conditional TransactWriteItems (which re-checks the
 *      gate), the transaction entering the reconciliation index;
 *   2. when the intent has an outcome already (the buyer paid, or the payment failed or was canceled, before the
 *      link existed, so the processor's event found no transaction), that outcome in its own write, through the
 *      processor event's path ({@link applyPaymentEvent}: split, ledger, partner webhooks); the event, when it comes
 *      again, changes nothing (decisions.md §12). The answer shows the status it left.
 * Attaching the same intent again answers the transaction as it is, after step 2 if it still waits (a first attach
 * that could not finish step 2 left it to the reconciliation, or to this retry); a transaction past `initialized`
 * with another intent is 409 TX_NOT_INITIALIZED.
 */
export async function attachIntent(
  deps: TransactionDeps,
  caller: Caller,
  input: { svcTxId: string; paymentIntentId: string },
): Promise<Transaction> {
  const transaction = await visibleTransaction(deps.transactions, caller, input.svcTxId);
  if (transaction.processorPaymentIntentId === input.paymentIntentId && transaction.status !== 'initialized') {
    return awaitsProcessor(transaction) ? applyIntentOutcome(deps, transaction, () => deps.processor.retrievePaymentIntent(input.paymentIntentId)) : transaction;
  }
  if (transaction.status !== 'initialized') throw errors.txNotInitialized();
  await resolvePayee(deps, caller, transaction.partnerId, transaction.clientId);
  const intent = await answeringRefusals(deps.processor.retrievePaymentIntent(input.paymentIntentId));
  // An intent made for another transaction or partner answers exactly as one that does not exist, and before
  // anything about it is compared: its existence, amount and currency are another partner's to know.
  const { svc_tx_id: intentTxId, partner_id: intentPartnerId } = intent?.metadata ?? {};
  const isOthers = (intentTxId !== undefined && intentTxId !== transaction.svcTxId) || (intentPartnerId !== undefined && intentPartnerId !== transaction.partnerId);
  if (intent === undefined || isOthers) throw invalidIntent('No such payment intent for this transaction at the processor');
  if (intent.amountMinor !== transaction.amountMinor || intent.currency !== transaction.currency) {
    throw invalidIntent("The payment intent's amount or currency does not match the transaction");
  }
  const now = new Date().toISOString();
  try {
    await deps.transactions.attachPaymentIntent(transaction, intent.id, now);
  } catch (error) {
    if (error instanceof IntentAlreadyLinked) throw intentAlreadyLinked();
    if (!(error instanceof TransactionStateConflict)) throw error;
    // Someone moved it first: answer from what is there now.
    return attachIntent(deps, caller, input);
  }
  const pending: Transaction = { ...transaction, status: 'pending', processorPaymentIntentId: intent.id, updatedAt: now };
  return applyIntentOutcome(deps, pending, async () => intent);
}

/**
 * Step 2 of {@link attachIntent}: the outcome the intent's state reports, applied through the processor event's path;
 * the transaction as it then is. Best effort: the link is written already, so a failure here (the processor or the
 * table unavailable) is logged and answered with the transaction still `pending`, which the reconciliation finishes.
 */
async function applyIntentOutcome(deps: TransactionDeps, transaction: Transaction, readIntent: () => Promise<PaymentIntent | undefined>): Promise<Transaction> {
  try {
    const event = (await readIntent())?.outcomeEvent;
    if (event === undefined) return transaction;
    const applied = await applyPaymentEvent(deps.paymentEvents, event, transaction);
    if (applied.moved) countMetric('AttachedIntentOutcomesApplied');
    if (applied.status === transaction.status) return transaction;
    return (await deps.transactions.getTransaction(transaction.svcTxId)) ?? { ...transaction, status: applied.status };
  } catch (error) {
    logger.error("The intent's outcome could not be applied at attach: the reconciliation will apply it", { error });
    countMetric('AttachedIntentOutcomesDeferred');
    return transaction;
  }
}

/** GET /transactions/{svc_tx_id}: the reconcile-by-`svc_tx_id` read (404 for another partner's). */
export const getTransactionFor = async (deps: TransactionStoreDeps, caller: Caller, svcTxId: string) => {
  const [tx] = await deps.transactions.withSettlementStatus([await visibleTransaction(deps.transactions, caller, svcTxId)]);
  return tx as Transaction;
};

/** A partner key lists its own partner; a platform key lists all, or one partner with `partner_id`. */
export async function listTransactionsFor(
  deps: TransactionStoreDeps,
  caller: Caller,
  partnerId: string | undefined,
  filters: TransactionFilters,
  page: { limit: number; cursor?: string | undefined },
) {
  assertActsFor(caller, partnerId);
  const found = await deps.transactions.listTransactions(caller.kind === 'partner' ? caller.partner.partnerId : partnerId, filters, page);
  return { ...found, items: await deps.transactions.withSettlementStatus(found.items) };
}

/**
 * GET /branding/packet (widget mode, decisions.md §10): what a partner's checkout widget shows, public and
 * secret-free. 404 PARTNER_NOT_FOUND / CLIENT_NOT_FOUND; no payment gate (it takes no payment).
 */
export async function getBrandingPacket(deps: BrandingDeps, partnerId: string, clientId: string) {
  const { partner, client } = await deps.payees.getPayee(partnerId, clientId);
  if (partner === undefined) throw errors.partnerNotFound();
  if (client === undefined) throw errors.clientNotFound();
  return { partner, client, publishableKey: await deps.processor.publishableKey() };
}
