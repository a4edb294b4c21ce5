/**
 * The partner's record of each checkout attempt: exactly what the service's guide says to keep (docs/checkout.md,
 * "Keep, per checkout attempt"), plus the last status this backend knows. Behind a small interface, so a partner
 * swaps the in-memory map for a table in their own database.
 */
import type { TransactionStatus } from './service-client';

export interface CheckoutAttempt {
  /** The partner's own immutable reference (the order id): the record's key. */
  partner_reference: string;
  /** The key the checkout was sent with; a retry of that checkout must send it again. */
  idempotency_key: string;
  /** The service's id of the payment: what webhooks name and reconciliation reads. */
  svc_tx_id: string;
  processor_payment_intent_id: string;
  /** What the buyer's card statement shows; null when none was asked for. */
  statement_descriptor_suffix: string | null;
  /** Only ever moves forward ({@link isLaterStatus}). */
  status: TransactionStatus;
  /**
   * When the checkout was first sent (ISO 8601). The service keeps an idempotency key at least 24 hours: only
   * within that window does sending the checkout again replay this payment rather than make a new one.
   */
  created_at: string;
}

export interface AttemptStore {
  /** Stores `attempt` unless one exists for its `partner_reference`; returns the stored one (the first wins). */
  insertIfAbsent(attempt: CheckoutAttempt): Promise<CheckoutAttempt>;
  get(partnerReference: string): Promise<CheckoutAttempt | undefined>;
  /** Webhooks and reconciliation find attempts by the service's id (a database indexes it). */
  findBySvcTxId(svcTxId: string): Promise<CheckoutAttempt | undefined>;
  /**
   * Moves the attempt to `status` only if that is later than its own (in a database: one conditional update,
   * `… WHERE status IN (<earlier statuses>)`), so a late or repeated report never moves it back. Returns the
   * attempt as stored afterwards.
   */
  advanceStatus(partnerReference: string, status: TransactionStatus): Promise<CheckoutAttempt>;
}

/**
 * The statuses each status can still reach, following the service's moves through (docs/checkout.md: attaching an
 * intent makes initialized → pending; then pending → succeeded | failed | abandoned; failed → succeeded; succeeded →
 * refunded | chargeback), since a partner may hear of a later status before an earlier one (webhooks are not
 * ordered). A copy, so that the example stands alone: its test holds it to the service's own moves
 * (`lib/domain/transaction.ts`), so a change there fails it.
 */
const LATER_STATUSES: Readonly<Record<TransactionStatus, readonly TransactionStatus[]>> = {
  initialized: ['pending', 'succeeded', 'failed', 'abandoned', 'refunded', 'chargeback'],
  pending: ['succeeded', 'failed', 'abandoned', 'refunded', 'chargeback'],
  failed: ['succeeded', 'refunded', 'chargeback'],
  succeeded: ['refunded', 'chargeback'],
  abandoned: [],
  refunded: [],
  chargeback: [],
};

export const isLaterStatus = (from: TransactionStatus, to: TransactionStatus) => LATER_STATUSES[from].includes(to);

/** For the example and its tests; data is lost on restart. Returns copies, as a database read would. */
export class InMemoryAttemptStore implements AttemptStore {
  private readonly attempts = new Map<string, CheckoutAttempt>();

  async insertIfAbsent(attempt: CheckoutAttempt): Promise<CheckoutAttempt> {
    if (!this.attempts.has(attempt.partner_reference)) this.attempts.set(attempt.partner_reference, { ...attempt });
    return { ...(this.attempts.get(attempt.partner_reference) as CheckoutAttempt) };
  }

  async get(partnerReference: string): Promise<CheckoutAttempt | undefined> {
    const attempt = this.attempts.get(partnerReference);
    return attempt === undefined ? undefined : { ...attempt };
  }

  async findBySvcTxId(svcTxId: string): Promise<CheckoutAttempt | undefined> {
    const attempt = [...this.attempts.values()].find((candidate) => candidate.svc_tx_id === svcTxId);
    return attempt === undefined ? undefined : { ...attempt };
  }

  async advanceStatus(partnerReference: string, status: TransactionStatus): Promise<CheckoutAttempt> {
    const attempt = this.attempts.get(partnerReference);
    if (attempt === undefined) throw new Error(`No checkout attempt for ${partnerReference}`);
    if (isLaterStatus(attempt.status, status)) attempt.status = status;
    return { ...attempt };
  }
}
