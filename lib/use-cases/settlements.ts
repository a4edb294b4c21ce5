/**
 * Settlement (interface-spec.md POST /settlements/run, GET /settlements; decisions.md §5a, §7): waiting ledger
 * entries grouped into batches, and the batches read back (payouts are `settlement-payouts.ts`). docs/settlement.md
 * tells the whole story; the invariants are kept by the store's conditional transactions (`lib/store/settlements.ts`).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { timeLeftMs } from '../deadline';
import { newAuditEvent } from '../domain/audit';
import { assertActsFor, type Caller } from '../domain/caller';
import { errors } from '../domain/errors';
import { newId } from '../domain/ids';
import { type BatchFilters, type OwingGroup, planBatches, type PlannedBatch, railFor, type SettlementBatch, type SettlementItem } from '../domain/settlement';
import { countMetric, logger } from '../observability';
import type { PayoutRails } from './ports/payouts';
import type { PayeeReader } from './ports/partner-readers';
import type { AuditLog, PartnerDirectory, SettlementStore } from './ports/settlement-store';
import type { Page } from '../domain/page';

export interface SettlementDeps {
  settlements: SettlementStore;
  partners: PartnerDirectory;
  payees: PayeeReader;
  /** Records what an admin starts (a run; a pay's audit event goes with its claim). */
  audit: AuditLog;
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
  const owing: OwingGroup[] = [];
  const failures: unknown[] = [];
  const partnerIds = scope.partnerId === undefined ? deps.partners.allPartnerIds() : [scope.partnerId];
  try {
    for await (const partnerId of partnerIds) {
      if (!hasTimeFor()) break;
      try {
        const { outcomes, owing: partnerOwing } = await settlePartner(deps, partnerId, scope.clientId, cutoff, now);
        owing.push(...partnerOwing);
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
  // From what the run read, failures or not: an alarm that a failing run silenced would hide a debt.
  if (scope.partnerId === undefined && scope.clientId === undefined) countOwing(owing, now);
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
  const plan = planBatches(waiting.items);
  for (const group of plan.owing) {
    logger.info('Merchant owes money: no batch until its sales cover it', { partnerId, clientId: group.clientId, currency: group.currency, owedMinor: group.owedMinor, since: group.since });
  }
  if (plan.unplaceable.length > 0) {
    logger.error('A reversal larger than one batch of sales covers: its merchant waits whole', { partnerId, groups: plan.unplaceable });
    countMetric('SettlementGroupsUnplaceable', plan.unplaceable.length);
  }
  const byGroup = new Map<string, PlannedBatch[]>();
  for (const batch of plan.batches) {
    const key = JSON.stringify([batch.clientId, batch.currency]);
    byGroup.set(key, [...(byGroup.get(key) ?? []), batch]);
  }
  const groups = [...byGroup.values()];
  const outcomes: PromiseSettledResult<SettlementBatch[]>[] = [];
  for (let start = 0; start < groups.length && hasTimeFor(); start += WRITE_CONCURRENCY) {
    outcomes.push(...(await Promise.allSettled(groups.slice(start, start + WRITE_CONCURRENCY).map((group) => writeGroup(deps, group, now)))));
  }
  return { outcomes, owing: plan.owing };
}

/**
 * The batches of one group (client, currency), one after another, those holding reversals first: a group of more
 * than one batch is paid its net only if all of them are written as planned, so the first that is not (lines taken
 * by another run meanwhile, a write given up) stops the rest, which wait for the next run. Otherwise a merchant
 * could be paid the batches of its sales while the one deducting its refunds was dropped.
 */
async function writeGroup(deps: SettlementDeps, group: PlannedBatch[], now: Date): Promise<SettlementBatch[]> {
  const reversalsFirst = [...group].sort((a, b) => Number(b.items.some((item) => item.netMinor < 0)) - Number(a.items.some((item) => item.netMinor < 0)));
  const written: SettlementBatch[] = [];
  for (const plan of reversalsFirst) {
    const [batch] = await writeBatch(deps, plan, now);
    if (batch !== undefined) written.push(batch);
    if (batch === undefined || batch.lines.length !== plan.items.length) break;
  }
  return written;
}

/** How long a merchant may owe money before an operator is told (decisions.md §5a): an alarm in AWS. */
const OWING_ALARM_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * The merchants that owe money, counted by a run over every partner (the schedule's): `MerchantsOwing`, and
 * `MerchantsOwingOver7Days` (those owing since more than 7 days), which the CDK app alarms on. Always emitted,
 * zero included, so the alarm clears once they are covered.
 */
function countOwing(owing: readonly OwingGroup[], now: Date) {
  const overdue = owing.filter((group) => now.getTime() - Date.parse(group.since) > OWING_ALARM_MS);
  countMetric('MerchantsOwing', owing.length);
  countMetric('MerchantsOwingOver7Days', overdue.length);
  if (overdue.length > 0) logger.warn('Merchants owing money for more than 7 days', { merchants: overdue.slice(0, 20) });
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
    next = planBatches(next.items.filter((line) => !taken.has(lineId(line)))).batches[0];
  }
  return [];
}

const lineId = (line: SettlementItem) => `${line.svcTxId}#${line.key}`;

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
  filters: BatchFilters,
  page: { limit: number; cursor?: string | undefined },
): Promise<Page<SettlementBatch>> {
  assertActsFor(caller, partnerId);
  return deps.settlements.listBatches(caller.kind === 'partner' ? caller.partner.partnerId : partnerId, filters, page);
}

