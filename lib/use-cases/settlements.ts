/**
 * Settlement (interface-spec.md POST /settlements/run, GET /settlements, POST /settlements/pay; decisions.md §5,
 * §7): waiting transactions grouped into batches, and batches paid out over their rail. docs/settlement.md tells
 * the whole story; the invariants are kept by the store's conditional transactions (`lib/store/settlements.ts`).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { timeLeftMs } from '../deadline';
import { type AuditEvent, newAuditEvent } from '../domain/audit';
import { assertActsFor, type Caller } from '../domain/caller';
import { errors } from '../domain/errors';
import { newId } from '../domain/ids';
import { toMajorUnits } from '../domain/money';
import { planBatches, type PlannedBatch, railFor, type SettlementBatch, type SettlementItem } from '../domain/settlement';
import { countMetric, logger } from '../observability';
import type { PayoutRails } from '../payouts/port';
import { assertClientCanTakePayment, assertPartnerCanTakePayment } from '../domain/transaction';
import type * as auditEvents from '../store/audit-events';
import type * as partners from '../store/partners';
import type * as payees from '../store/payees';
import type * as settlements from '../store/settlements';
import type { Page } from '../store/paging';

export interface SettlementDeps {
  settlements: Pick<
    typeof settlements,
    'listWaiting' | 'createBatch' | 'getBatch' | 'listBatches' | 'claimPayout' | 'releasePayoutClaim' | 'recordPayoutSent' | 'recordPayoutFailed'
  >;
  partners: Pick<typeof partners, 'getPartner' | 'allPartnerIds'>;
  payees: Pick<typeof payees, 'getPayee'>;
  /** Records what an admin starts (a run; a pay's audit event goes with its claim). */
  audit: Pick<typeof auditEvents, 'recordAuditEvent'>;
  rails: PayoutRails;
  /** `day_boundary`: created before 00:00 UTC today; `now`: every succeeded transaction (decisions.md §1). */
  cutoff: 'day_boundary' | 'now';
  now: () => Date;
}

/** Which waiting items a run looks at: one partner's (or every partner's), optionally one client's. */
export interface RunScope {
  partnerId?: string | undefined;
  clientId?: string | undefined;
}

/**
 * The time a run keeps in hand: it starts no batch write with less than this left before its deadline, so it
 * answers with the batches it made instead of being cut off mid-way (what it left waits for the next run).
 */
const RUN_RESERVE_MS = 3_000;
/** Batches of one partner written at once. */
const WRITE_CONCURRENCY = 4;

/** The instant before which a succeeded transaction is eligible. */
export function cutoffOf(mode: SettlementDeps['cutoff'], now: Date): string {
  if (mode === 'now') return now.toISOString();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())).toISOString();
}

/** The scope a caller's `partner_id`/`client_id` give a run: a partner key only ever its own partner. */
async function runScopeFor(deps: SettlementDeps, caller: Caller, query: RunScope): Promise<RunScope> {
  assertActsFor(caller, query.partnerId);
  if (caller.kind === 'partner') return { partnerId: caller.partner.partnerId, clientId: query.clientId };
  if (query.partnerId !== undefined && (await deps.partners.getPartner(query.partnerId)) === undefined) throw errors.partnerNotFound();
  return query;
}

/**
 * `POST /settlements/run` and `POST /admin/settlements/run`. Steps: the caller's scope (a partner key: its own
 * partner; another's is 403; a named partner must exist, 404); an admin's run recorded in the audit log (who, and
 * the scope) before it starts, so no run an admin made is missing from the log (a run is many transactions: its
 * batches cannot share one with the event); then {@link runSettlement}.
 */
export async function runSettlementFor(deps: SettlementDeps, caller: Caller, query: RunScope): Promise<SettlementBatch[]> {
  const scope = await runScopeFor(deps, caller, query);
  if (caller.kind === 'admin') {
    const details = { admin: caller.subject, client_id: scope.clientId ?? null };
    await deps.audit.recordAuditEvent(
      newAuditEvent({ type: 'settlement_run.requested', partnerId: scope.partnerId ?? null, resourceType: 'settlement_run', resourceId: newId.settlementRun(), details }, deps.now()),
    );
  }
  return runSettlement(deps, scope);
}

/**
 * One settlement run: every eligible item of the scope planned into batches (`planBatches`) and each batch
 * written with its lines' flips in one transaction. A batch that loses lines to a concurrent run is planned
 * again without them. Returns the batches this run created.
 *
 * A failure is contained to its partner (a read) or its batch (a write): logged and counted, the rest of the run
 * goes on, and what failed still waits for the next run. Only a run that failed without creating anything fails
 * as a whole (so a table that is down answers 503, not "nothing to settle").
 */
export async function runSettlement(deps: SettlementDeps, scope: RunScope): Promise<SettlementBatch[]> {
  const now = deps.now();
  const cutoff = cutoffOf(deps.cutoff, now);
  const created: SettlementBatch[] = [];
  const failures: unknown[] = [];
  const partnerIds = scope.partnerId === undefined ? deps.partners.allPartnerIds() : [scope.partnerId];
  try {
    for await (const partnerId of partnerIds) {
      if (!hasTimeFor()) break;
      try {
        const outcomes = await settlePartner(deps, partnerId, scope.clientId, cutoff, now);
        for (const outcome of outcomes) {
          if (outcome.status === 'fulfilled') created.push(...outcome.value);
          else failures.push(outcome.reason);
        }
      } catch (error) {
        failures.push(error);
      }
    }
  } catch (error) {
    // The list of partners itself failed part-way: what was made stands; the rest waits for the next run.
    failures.push(error);
  }
  countMetric('SettlementBatchesCreated', created.length);
  if (failures.length > 0) {
    countMetric('SettlementRunFailures', failures.length);
    logger.error('Settlement run: some partners or batches failed; they wait for the next run', { failures: failures.length, error: failures[0] });
    if (created.length === 0) throw failures[0];
  }
  return created;
}

async function settlePartner(deps: SettlementDeps, partnerId: string, clientId: string | undefined, cutoff: string, now: Date) {
  const waiting = await deps.settlements.listWaiting(partnerId, clientId, cutoff);
  if (waiting.withoutFees.length > 0) {
    logger.error('Succeeded transactions without a fee split are left out of settlement', { partnerId, svcTxIds: waiting.withoutFees.slice(0, 20) });
    countMetric('SettlementItemsWithoutFees', waiting.withoutFees.length);
  }
  const plans = planBatches(waiting.items);
  const outcomes: PromiseSettledResult<SettlementBatch[]>[] = [];
  for (let start = 0; start < plans.length && hasTimeFor(); start += WRITE_CONCURRENCY) {
    outcomes.push(...(await Promise.allSettled(plans.slice(start, start + WRITE_CONCURRENCY).map((plan) => writeBatch(deps, plan, now)))));
  }
  return outcomes;
}

const hasTimeFor = () => (timeLeftMs() ?? Number.POSITIVE_INFINITY) > RUN_RESERVE_MS;

/** Tries of one batch that other writes keep cancelling (beyond the store's quick retries), with a growing pause. */
const CONTENDED_TRIES = 5;
const contentionPause = (tries: number) => sleep(50 * tries + Math.random() * 100);

/**
 * Writes one planned batch; lines taken meanwhile by another run are dropped and the rest planned again; a write
 * cancelled by concurrent writes is tried again a few times, then left for the next run.
 */
async function writeBatch(deps: SettlementDeps, plan: PlannedBatch, now: Date): Promise<SettlementBatch[]> {
  let next: PlannedBatch | undefined = plan;
  let contended = 0;
  while (next !== undefined && hasTimeFor()) {
    const batch = newBatch(next, now);
    const write = await deps.settlements.createBatch(batch);
    if (write.outcome === 'created') return [batch];
    if (write.outcome === 'contended') {
      countMetric('SettlementBatchWritesContended');
      // Given up: a failure of this run (counted, and a run that made nothing answers 503); the lines still wait.
      if (++contended >= CONTENDED_TRIES) throw errors.contended();
      await contentionPause(contended);
      continue;
    }
    countMetric('SettlementLinesTakenByAnotherRun', write.taken.length);
    const taken = new Set(write.taken.map(lineId));
    // Each such round drops at least one line; what is left is one group, so one batch at most.
    next = planBatches(next.items.filter((line) => !taken.has(lineId(line))))[0];
  }
  return [];
}

const lineId = (line: SettlementItem) => `${line.kind}#${line.svcTxId}#${line.reversal ?? ''}`;

function newBatch(plan: PlannedBatch, now: Date): SettlementBatch {
  const at = now.toISOString();
  return {
    id: randomUUID(),
    partnerId: plan.partnerId,
    clientId: plan.clientId,
    currency: plan.currency,
    lines: plan.items,
    totals: plan.totals,
    status: 'pending',
    rail: railFor(plan.currency),
    transferId: null,
    payoutClaim: null,
    payoutAttempts: 0,
    failureReason: null,
    createdAt: at,
    updatedAt: at,
  };
}

/** A batch the caller may see: a partner key only its own partner's (another's is 404, its existence not revealed). */
export async function getBatchFor(deps: SettlementDeps, caller: Caller, batchId: string): Promise<SettlementBatch> {
  const batch = await deps.settlements.getBatch(batchId);
  if (batch === undefined || (caller.kind === 'partner' && batch.partnerId !== caller.partner.partnerId)) throw errors.batchNotFound();
  return batch;
}

export function listBatchesFor(
  deps: SettlementDeps,
  caller: Caller,
  partnerId: string | undefined,
  filters: settlements.BatchFilters,
  page: { limit: number; cursor?: string | undefined },
): Promise<Page<SettlementBatch>> {
  assertActsFor(caller, partnerId);
  return deps.settlements.listBatches(caller.kind === 'partner' ? caller.partner.partnerId : partnerId, filters, page);
}

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
