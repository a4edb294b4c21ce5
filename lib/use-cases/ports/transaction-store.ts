/**
 * What the transaction use cases need from the store of transactions, and the refusals its writes answer with, in
 * the service's terms (clients and payees are read through `partner-readers.ts`). The DynamoDB adapter
 * (`lib/store/transactions.ts`) implements it: it turns its cancelled transactions into these errors, or into the payment gate's own (403 PARTNER_NOT_ACTIVE,
 * KYC_NOT_APPROVED, CLIENT_NOT_ACTIVE, ... as the write found the partner or client).
 */
import type { FoldedCompletion } from '../../domain/idempotency';
import type { Page } from '../../domain/page';
import type { Transaction, TransactionFilters } from '../../domain/transaction';

/** A transaction with this `svc_tx_id` exists already: an earlier try of the same attempt wrote it. */
export class TransactionExists extends Error {
  override readonly name = 'TransactionExists';
}

/** The transaction was no longer `initialized` when the write came: someone moved it first. */
export class TransactionStateConflict extends Error {
  override readonly name = 'TransactionStateConflict';
}

/** The payment intent is linked to another transaction already: an intent belongs to one transaction only. */
export class IntentAlreadyLinked extends Error {
  override readonly name = 'IntentAlreadyLinked';
}

export interface TransactionStore {
  /**
   * Writes a new transaction and, when it has one, its intent link, atomically, on condition that neither exists
   * and the payee still passes the payment gate; with `completion`, the request's idempotency key is completed in
   * the same write (`completion.committed` once it is; a key another request holds meanwhile refuses it all: 409
   * IDEMPOTENCY_KEY_IN_USE). Rejects with {@link TransactionExists} or {@link IntentAlreadyLinked}.
   */
  createTransaction(tx: Transaction, completion?: FoldedCompletion): Promise<Transaction>;
  getTransaction(svcTxId: string): Promise<Transaction | undefined>;
  /**
   * initialized -> pending with the intent linked, atomically, on condition that the transaction is still
   * `initialized`, the intent linked nowhere, and the payee still passes the payment gate. Rejects with
   * {@link TransactionStateConflict} or {@link IntentAlreadyLinked}.
   */
  attachPaymentIntent(tx: Pick<Transaction, 'svcTxId' | 'partnerId' | 'clientId'>, paymentIntentId: string, now: string): Promise<void>;
  /** One partner's transactions, or (no partner) every partner's; newest first, filtered, paged. */
  listTransactions(
    partnerId: string | undefined,
    filters: TransactionFilters,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<Page<Transaction>>;
  /** The transactions with the settlement status their batches give them (a line's status follows its batch). */
  withSettlementStatus(transactions: Transaction[]): Promise<Transaction[]>;
}
