/**
 * Payouts (interface-spec.md POST /settlements/pay; decisions.md §5a, §7): a settlement batch paid over its rail,
 * once, whatever fails or races. docs/settlement.md tells the whole story; the invariants are kept by the store's
 * conditional claim and records (`lib/store/settlements.ts`).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { timeLeftMs } from '../deadline';
import { type AuditEvent, newAuditEvent } from '../domain/audit';
import type { Caller } from '../domain/caller';
import { errors } from '../domain/errors';
import { toMajorUnits } from '../domain/money';
import type { SettlementBatch } from '../domain/settlement';
import { assertClientCanTakePayment, assertPartnerCanTakePayment } from '../domain/transaction';
import { countMetric, logger } from '../observability';
import { getBatchFor, type SettlementDeps } from './settlements';

/**
 * How long a payout holds its claim: the time this request has left (its rail call ends before it), plus a
 * margin; outside a request (no deadline), a minute. A payout cut off by a crash frees the batch after this.
 */
const claimLeaseMs = () => Math.max(timeLeftMs() ?? 60_000, 0) + 5_000;

/** What a partner reads in `failureReason`; the rail's own words (which may name configuration) are logged. */
const FAILURE_REASONS = {
  refused: 'The payout rail refused the payout; nothing was paid. The batch may be paid again.',
  unknown: 'The payout rail did not confirm the payout. Paying the batch again is safe: a payout already made is found, not repeated.',
} as const;

/**
 * Pays a batch (decisions.md §7): claimed (pending or failed, no payout running), paid over its rail with the
 * batch id as the rail's idempotency key, then recorded `sent` with every line `paid` at once, or `failed`
 * (502 PAYOUT_FAILED).
 *
 * Never twice: an attempt after an earlier one (which may have paid before its answer or its record was lost)
 * first asks the rail for a payout under the batch's key and completes the batch with it; only when the rail
 * says there is none does it pay. The rail's replay of a paid key is the second line of defence.
 */
export async function payBatch(deps: SettlementDeps, caller: Caller, batchId: string): Promise<SettlementBatch> {
  const batch = await getBatchFor(deps, caller, batchId);
  if (batch.status === 'sent') throw errors.batchAlreadyPaid();
  const now = deps.now();
  const claim = { id: randomUUID(), expiresAt: new Date(now.getTime() + claimLeaseMs()).toISOString() };
  const claimed = await deps.settlements.claimPayout(batch.id, claim, now.toISOString(), payoutAudit(caller, batch, now));
  if (claimed.outcome === 'refused') {
    if (claimed.batch?.status === 'sent') throw errors.batchAlreadyPaid();
    throw errors.batchPayoutInProgress();
  }
  const held = claimed.batch;
  // Nothing to pay (the adjustments took the whole net): no rail moves zero; the batch is settled as it is.
  if (held.totals.netMinor === 0) return recordSent(deps, held, claim.id, null);
  // A payout an earlier attempt made is recorded whatever has happened since: the money has left.
  if (held.payoutAttempts > 1) {
    const earlier = await askRail(deps, held, claim.id, () => deps.rails.findPaid({ rail: held.rail, idempotencyKey: held.id }));
    if (earlier !== null) return recordSent(deps, held, claim.id, earlier.transferId);
  }
  await assertPayeeCanBePaid(deps, held, claim.id);
  await assertClientDoesNotOwe(deps, held, claim.id);
  const result = await askRail(deps, held, claim.id, () => deps.rails.pay(payoutOf(held)));
  if (result.outcome === 'failed') {
    logger.warn('Payout refused', { batchId: held.id, rail: held.rail, detail: result.reason, transferId: result.transferId });
    await recordFailed(deps, held, claim.id, { reason: FAILURE_REASONS.refused, detail: result.reason });
    throw errors.payoutFailed();
  }
  return recordSent(deps, held, claim.id, result.transferId);
}

/**
 * An admin's pay is audited: the event goes in the claim's own transaction, so it is recorded exactly when the
 * admin's attempt took the batch (a refused pay, 409, records nothing). It records the attempt, not its outcome:
 * the batch's status tells that (a payee refused after the claim, 403, leaves it as it was). Partner and platform
 * keys' pays are not audited.
 */
function payoutAudit(caller: Caller, batch: SettlementBatch, now: Date): AuditEvent | undefined {
  if (caller.kind !== 'admin') return undefined;
  const details = { admin: caller.subject, currency: batch.currency, total_net: toMajorUnits(batch.totals.netMinor, batch.currency) };
  return newAuditEvent({ type: 'settlement_batch.payout_started', partnerId: batch.partnerId, resourceType: 'settlement_batch', resourceId: batch.id, details }, now);
}

/**
 * A call to the rail, whose failure leaves the outcome unknown (the rail may have paid): the batch is recorded
 * `failed` (a later attempt asks the rail first) and the caller gets 502 PAYOUT_FAILED.
 */
async function askRail<T>(deps: SettlementDeps, batch: SettlementBatch, claimId: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const detail = error instanceof Error ? error.message : 'the rail gave no answer';
    logger.warn('Payout outcome unknown', { batchId: batch.id, rail: batch.rail, detail });
    await recordFailed(deps, batch, claimId, { reason: FAILURE_REASONS.unknown, detail: `outcome unknown: ${detail}` });
    throw errors.payoutFailed(error);
  }
}

/**
 * New money goes out only to a payee that could take a payment (decisions.md §5's gate, with its codes): a
 * suspended partner, one whose KYC is not approved, or an inactive merchant has its batch held (the claim given
 * back, nothing else changed), payable once reinstated.
 */
async function assertPayeeCanBePaid(deps: SettlementDeps, batch: SettlementBatch, claimId: string): Promise<void> {
  const payee = await deps.payees.getPayee(batch.partnerId, batch.clientId);
  try {
    assertPartnerCanTakePayment(payee.partner);
    assertClientCanTakePayment(payee.client);
  } catch (refusal) {
    await deps.settlements.releasePayoutClaim(batch, claimId, deps.now().toISOString());
    throw refusal;
  }
}

/**
 * No payout while the merchant owes more than it has earned (decisions.md §5a): a batch made while its merchant was
 * owed money, and a refund or dispute since that leaves the merchant's waiting entries (in the batch's currency)
 * netting below zero by more than this batch pays, is held (the claim given back, 409 CLIENT_OWES) until later sales
 * cover the difference. A batch that pays more than the merchant owes is paid: holding all of it for a smaller debt
 * would keep a merchant that stops trading from its money for ever (the debt stays owed, shown by `GET /balances`,
 * and is taken from its next sales). What it owes is read as `GET /balances` reads it: the waiting entries and the
 * lines a run building a batch holds reserved, each once.
 */
async function assertClientDoesNotOwe(deps: SettlementDeps, batch: SettlementBatch, claimId: string): Promise<void> {
  const owedMinor = await deps.settlements.owedMinor(batch);
  if (owedMinor === 0) return;
  if (owedMinor <= batch.totals.netMinor) {
    logger.info('Payout made while the merchant owes less than the batch pays: the debt is taken from its next sales', { batchId: batch.id, owedMinor });
    countMetric('SettlementPayoutsWhileOwing');
    return;
  }
  logger.warn('Payout held: the merchant owes more than the batch pays', { batchId: batch.id, owedMinor });
  countMetric('SettlementPayoutsHeldForDebt');
  await deps.settlements.releasePayoutClaim(batch, claimId, deps.now().toISOString());
  throw errors.clientOwes();
}

const payoutOf = (batch: SettlementBatch) => ({
  rail: batch.rail,
  idempotencyKey: batch.id,
  batchId: batch.id,
  partnerId: batch.partnerId,
  clientId: batch.clientId,
  amountMinor: batch.totals.netMinor,
  currency: batch.currency,
});

/**
 * Tries of the `sent` record after the rail paid (a write lost now leaves a paid batch looking unpaid until the
 * next pay finds the payout), while this much of the request's time is left (the rail call ends 1 s before it).
 */
const RECORD_TRIES = 3;
const RECORD_RESERVE_MS = 300;

async function recordSent(deps: SettlementDeps, batch: SettlementBatch, claimId: string, transferId: string | null): Promise<SettlementBatch> {
  const at = deps.now().toISOString();
  let recorded;
  for (let tries = 1; ; tries++) {
    try {
      recorded = await deps.settlements.recordPayoutSent(batch, claimId, transferId, at);
      break;
    } catch (error) {
      // Still unrecorded: the claim lapses, and the next pay finds this payout at the rail and records it.
      logger.error('A paid batch could not be recorded sent', { batchId: batch.id, transferId, tries, error });
      if (tries >= RECORD_TRIES || (timeLeftMs() ?? Number.POSITIVE_INFINITY) < RECORD_RESERVE_MS) throw error;
      await sleep(100 * tries);
    }
  }
  if (recorded === 'recorded') {
    countMetric('SettlementBatchesPaid');
    return { ...batch, status: 'sent', transferId, payoutClaim: null, failureReason: null, updatedAt: at };
  }
  // The claim lapsed while the rail answered, and another attempt took the batch: it asks the rail first, so it
  // finds this same transfer. Whatever that attempt recorded is the batch now.
  const now = await deps.settlements.getBatch(batch.id);
  if (now?.status === 'sent') return now;
  throw errors.batchPayoutInProgress();
}

async function recordFailed(deps: SettlementDeps, batch: SettlementBatch, claimId: string, failure: { reason: string; detail: string }): Promise<void> {
  countMetric('SettlementPayoutsFailed');
  const recorded = await deps.settlements.recordPayoutFailed(batch, claimId, failure, deps.now().toISOString());
  if (recorded === 'claim-lost') logger.warn('Payout failure not recorded: another attempt holds the batch', { batchId: batch.id });
}
