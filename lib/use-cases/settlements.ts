/**
 * Settlement (interface-spec.md POST /settlements/run, GET /settlements; decisions.md §5a, §7): waiting ledger
 * entries grouped into batches, and the batches read back (payouts are `settlement-payouts.ts`). docs/settlement.md
 * tells the whole story; the invariants are kept by the store's conditional transactions (`lib/store/settlements.ts`).
 */
import { randomUUID } from 'node:crypto';
import { timeLeftMs } from '../deadline';
import { newAuditEvent } from '../domain/audit';
import type { Caller } from '../domain/caller';
import { errors } from '../domain/errors';
import { newId } from '../domain/ids';
import { partnerActedFor } from './partner-scope';
import { BATCH_LIMITS } from '../domain/settlement-report';
import { type BatchFilters, contentsOf, type OwingGroup, planBatches, type PlannedBatch, railFor, type SettlementBatch, type SettlementItem, totalsOf } from '../domain/settlement';
import { countMetric, logger } from '../observability';
import type { PayoutRails } from './ports/payouts';
import type { PayeeReader } from './ports/partner-readers';
import type { AuditLog, GroupKey, PartnerDirectory, SettlementContinuations, SettlementStore } from './ports/settlement-store';
import type { Page } from '../domain/page';

export interface SettlementDeps {
  settlements: SettlementStore;
  partners: PartnerDirectory;
  payees: PayeeReader;
  /** Records what an admin starts (a run; a pay's audit event goes with its claim). */
  audit: AuditLog;
  rails: PayoutRails;
  /** Where a run sends what it had no time or room for (the continuation queue). */
  continuations: SettlementContinuations;
  /** `day_boundary`: created before 00:00 UTC today; `now`: every succeeded transaction (decisions.md §1). */
  cutoff: 'day_boundary' | 'now';
  /**
   * How long a run holds a group's lease without renewing it (`SETTLEMENT_GROUP_LEASE_SECONDS`): it renews it before
   * each slice of lines it reserves, so a run cut off frees its group this long after, and the next run discards
   * what it left.
   */
  groupLeaseMs: number;
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
/** Groups of one partner built at once. */
const GROUP_CONCURRENCY = 8;
/**
 * Lines a group's build reserves and commits a second, at the least: measured locally on 2 cores, 220-390 alone and
 * about 300 each for two groups side by side, under load (DynamoDB in AWS is faster). A run starts no batch it could
 * not finish before its deadline at this rate, and leaves it to its continuation, which has 15 minutes: an HTTP run
 * (about 24 s) builds batches of up to about 4,000 lines itself.
 */
const BUILD_LINES_PER_SECOND = 200;

/** The instant before which a succeeded transaction is eligible. */
export function cutoffOf(mode: SettlementDeps['cutoff'], now: Date): string {
  if (mode === 'now') return now.toISOString();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())).toISOString();
}

/** The scope a caller's `partner_id`/`client_id` give a run: a partner key only ever its own partner. */
async function runScopeFor(deps: SettlementDeps, caller: Caller, query: RunScope): Promise<RunScope> {
  return { partnerId: await partnerActedFor(deps.partners, caller, query.partnerId), clientId: query.clientId };
}

/**
 * `POST /settlements/run` and `POST /admin/settlements/run`. Steps: the caller's scope (a partner key: its own
 * partner; another's is 403; a named partner must exist, 404); an admin's run recorded in the audit log (who, and
 * the scope) before it starts, so no run an admin made is missing from the log (a run is many transactions: its
 * batches cannot share one with the event); then {@link runSettlement}.
 */
export async function runSettlementFor(deps: SettlementDeps, caller: Caller, query: RunScope): Promise<SettlementRun> {
  const scope = await runScopeFor(deps, caller, query);
  if (caller.kind === 'admin') {
    const details = { admin: caller.subject, client_id: scope.clientId ?? null };
    await deps.audit.recordAuditEvent(
      newAuditEvent({ type: 'settlement_run.requested', partnerId: scope.partnerId ?? null, resourceType: 'settlement_run', resourceId: newId.settlementRun(), details }, deps.now()),
    );
  }
  return settle(deps, scope);
}

/** What a run made, and whether it goes on by itself (a continuation was sent for what it had no time or room for). */
export interface SettlementRun {
  batches: SettlementBatch[];
  continuing: boolean;
}

/** A continuation's own: the cutoff of the run it continues, and how many continuations came before it. */
export interface ContinuationOf {
  cutoff: string;
  attempt: number;
}

/**
 * The size of the batches a run answers with, at most (about: ids and adjustments): past it the run starts no
 * other group and sends a continuation, so `POST /settlements/run` answers under Lambda's 6 MB.
 */
const ANSWER_BYTES = 4_000_000;
/** Continuations of one run at most: a backlog of 100 × 15 minutes' work is an operator's matter, not a loop. */
const MAX_CONTINUATIONS = 100;

const viewBytes = (transactions: number, adjustments: number) => 1_000 + 45 * transactions + 400 * adjustments;
/** A planned batch's view in the answer, at most (the lines a build loses only make it smaller). */
const plannedViewBytes = (plan: PlannedBatch) => {
  const transactions = plan.items.filter((item) => item.settlesTransaction).length;
  return viewBytes(transactions, plan.items.length - transactions);
};

/** A build stopped because the run's time ran out (not a failure: the run goes on by itself). */
class OutOfTime extends Error {}

/**
 * A run's state as it goes: its id, its cutoff, the answer's bytes (counted from the moment a batch starts, so groups
 * built side by side share one budget), and whether it left work it had no time or room for.
 */
interface RunState {
  runId: string;
  cutoff: string;
  now: Date;
  answerBytes: number;
  unfinished: boolean;
}

/**
 * Whether the run may start a batch of `lines` lines and `bytes` of answer: time left to build it at
 * {@link BUILD_LINES_PER_SECOND} (a group's rate, measured with groups built side by side: a build that turns out
 * slower stops before the deadline all the same, `buildBatch`), and room in the answer (the first batch always has
 * room: one batch's view is under it). When not, it leaves the rest unfinished.
 */
function canGoOn(state: RunState, lines = 0, bytes = 0): boolean {
  const ok = hasTimeFor((lines / BUILD_LINES_PER_SECOND) * 1000) && (state.answerBytes === 0 || state.answerBytes + bytes <= ANSWER_BYTES);
  if (!ok) state.unfinished = true;
  return ok;
}

/** {@link settle}'s batches: for callers (tests, tools) that need only those. */
export async function runSettlement(deps: SettlementDeps, scope: RunScope): Promise<SettlementBatch[]> {
  return (await settle(deps, scope)).batches;
}

/**
 * One settlement run: every eligible item of the scope planned into batches (`planBatches`), each group's built
 * under its lease and each batch committed in one write (`buildBatch`). Returns the batches this run created, and
 * whether it goes on by itself.
 *
 * A run that stops before it is done (its time, the size of its answer, or a backlog larger than one read of a
 * partner) sends a continuation with its scope and cutoff (`deps.continuations`, a queue in AWS and locally), which
 * a worker runs with its own 15 minutes, and which sends the next while it makes progress. A continuation that made
 * nothing sends none: what is left waits for the next run.
 *
 * A failure is contained to its partner (a read) or its group (a build): logged and counted, the rest of the run
 * goes on, and what failed still waits for the next run. Only a run that failed without creating anything fails
 * as a whole (so a table that is down answers 503, not "nothing to settle").
 */
export async function settle(deps: SettlementDeps, scope: RunScope, continuation?: ContinuationOf): Promise<SettlementRun> {
  const now = deps.now();
  // A continuation running: the next run of its scope that cannot finish may send another.
  if (continuation !== undefined) await deps.continuations.started(scope);
  const state: RunState = { runId: randomUUID(), cutoff: continuation?.cutoff ?? cutoffOf(deps.cutoff, now), now, answerBytes: 0, unfinished: false };
  const created: SettlementBatch[] = [];
  const owing: OwingGroup[] = [];
  const failures: unknown[] = [];
  const partnerIds = scope.partnerId === undefined ? deps.partners.allPartnerIds() : [scope.partnerId];
  try {
    for await (const partnerId of partnerIds) {
      if (!canGoOn(state)) break;
      try {
        const { outcomes, owing: partnerOwing } = await settlePartner(deps, partnerId, scope.clientId, state);
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
  // From what a whole run read, failures or not: an alarm that a failing run silenced would hide a debt.
  if (scope.partnerId === undefined && scope.clientId === undefined && continuation === undefined) countOwing(owing, now);
  if (failures.length > 0) {
    countMetric('SettlementRunFailures', failures.length);
    logger.error('Settlement run: some partners or batches failed; they wait for the next run', { failures: failures.length, error: failures[0] });
    if (created.length === 0) throw failures[0];
  }
  const attempt = (continuation?.attempt ?? 0) + 1;
  const progress = continuation === undefined || created.length > 0;
  if (!state.unfinished || !progress || attempt > MAX_CONTINUATIONS) {
    if (state.unfinished) logger.warn('Settlement run left work it will not continue: the next run settles it', { attempt, createdBatches: created.length });
    return { batches: created, continuing: false };
  }
  try {
    // Already one waiting to run for this scope: it settles the rest (a caller repeating its runs queues no more).
    const sent = await deps.continuations.continueRun({ scope, cutoff: state.cutoff, attempt });
    countMetric(sent === 'sent' ? 'SettlementRunsContinued' : 'SettlementContinuationsAlreadyPending');
    return { batches: created, continuing: true };
  } catch (error) {
    // What is left waits for the next run, as before continuations.
    logger.error('A settlement continuation could not be sent: the next run settles what is left', { error });
    return { batches: created, continuing: false };
  }
}

async function settlePartner(deps: SettlementDeps, partnerId: string, clientId: string | undefined, state: RunState) {
  const untidy = await tidyBuilds(deps, partnerId, clientId, state);
  const waiting = await deps.settlements.listWaiting(partnerId, clientId, state.cutoff);
  if (waiting.more) state.unfinished = true;
  if (waiting.withoutFees.length > 0) {
    logger.error('Succeeded transactions without a fee split are left out of settlement', { partnerId, svcTxIds: waiting.withoutFees.slice(0, 20) });
    countMetric('SettlementItemsWithoutFees', waiting.withoutFees.length);
  }
  const plan = planBatches(waiting.items, BATCH_LIMITS);
  const cut = waiting.partialGroup;
  const ofCut = plan.batches.filter((batch) => cut !== undefined && batch.clientId === cut.clientId && batch.currency === cut.currency);
  if (ofCut.some((batch) => batch.full)) {
    // The group the read stopped in: only its full batches now, so that it still makes batches of 10,000; its
    // remainder is read again, whole, with what follows it.
    plan.batches = plan.batches.filter((batch) => !ofCut.includes(batch) || batch.full);
  }
  for (const group of plan.owing) {
    logger.info('Merchant owes money: no batch until its sales cover it', { partnerId, clientId: group.clientId, currency: group.currency, owedMinor: group.owedMinor, since: group.since });
  }
  if (plan.unplaceable.length > 0) {
    logger.error('Reversals larger than one batch of sales covers: their merchant waits whole', { partnerId, groups: plan.unplaceable });
    countMetric('SettlementGroupsUnplaceable', plan.unplaceable.length);
  }
  const byGroup = new Map<string, PlannedBatch[]>();
  for (const batch of plan.batches) {
    // A group with lines still in a discarded build: what waits of it is only a part, settled once all of it waits.
    if (untidy.has(groupName(batch))) continue;
    byGroup.set(groupName(batch), [...(byGroup.get(groupName(batch)) ?? []), batch]);
  }
  const groups = [...byGroup.values()];
  const outcomes: PromiseSettledResult<SettlementBatch[]>[] = [];
  for (let start = 0; start < groups.length && canGoOn(state); start += GROUP_CONCURRENCY) {
    outcomes.push(...(await Promise.allSettled(groups.slice(start, start + GROUP_CONCURRENCY).map((group) => settleGroup(deps, group, state)))));
  }
  return { outcomes, owing: plan.owing };
}

/** Lines reserved between two renewals of the lease. */
const RESERVE_SLICE = 1_000;

const leaseUntil = (deps: SettlementDeps) => new Date(deps.now().getTime() + deps.groupLeaseMs).toISOString();
const groupOf = (batch: GroupKey): GroupKey => ({ partnerId: batch.partnerId, clientId: batch.clientId, currency: batch.currency });
const claimGroup = (deps: SettlementDeps, group: GroupKey, runId: string) => deps.settlements.claimGroup(group, runId, leaseUntil(deps), deps.now().toISOString());

/**
 * What killed or overtaken runs left of the partner's builds (usually nothing): each one whose group no live run
 * holds is discarded, its lines waiting again, before this run reads what waits. A discarded build, released, is
 * forgotten once no run can still be reserving lines for it (a lease after its discard).
 */
async function tidyBuilds(deps: SettlementDeps, partnerId: string, clientId: string | undefined, state: RunState): Promise<Set<string>> {
  /** The groups with lines still in a build this run could not discard (its time ran out): not settled now. */
  const untidy = new Set<string>();
  for (const build of await deps.settlements.listBuilds(partnerId)) {
    if (clientId !== undefined && build.clientId !== clientId) continue;
    if (!canGoOn(state)) {
      untidy.add(groupName(build));
      continue;
    }
    if (!(await claimGroup(deps, groupOf(build), state.runId))) continue;
    try {
      const outcome = await deps.settlements.discardBuild(build, deps.now().toISOString());
      if (build.status === 'building') {
        countMetric('SettlementBuildsDiscarded');
        logger.warn('A settlement build left by a run that was cut off is discarded: its lines wait again', { batchId: build.id, partnerId, clientId: build.clientId });
      }
      if (outcome === 'unfinished') {
        untidy.add(groupName(build));
        state.unfinished = true;
      }
      if (outcome === 'discarded' && build.discardedAt !== null && state.now.getTime() - Date.parse(build.discardedAt) > deps.groupLeaseMs) {
        await deps.settlements.forgetBuild(build.id);
      }
    } finally {
      await deps.settlements.releaseGroup(groupOf(build), state.runId);
    }
  }
  return untidy;
}

const groupName = (group: Pick<GroupKey, 'clientId' | 'currency'>) => JSON.stringify([group.clientId, group.currency]);

/**
 * The batches of one group (client, currency), under its lease (another run building it: this run leaves it), one
 * after another, the one holding reversals first (`planBatches`): the first that is not made as planned (lines
 * taken or changed meanwhile, a build lost) stops the rest, which wait for the next run.
 */
async function settleGroup(deps: SettlementDeps, plans: PlannedBatch[], state: RunState): Promise<SettlementBatch[]> {
  const group = groupOf(plans[0] as PlannedBatch);
  const { runId } = state;
  if (!(await claimGroup(deps, group, runId))) {
    countMetric('SettlementGroupsBusy');
    return [];
  }
  try {
    const written: SettlementBatch[] = [];
    for (const plan of plans) {
      const bytes = plannedViewBytes(plan);
      if (!canGoOn(state, plan.items.length, bytes)) break;
      state.answerBytes += bytes;
      let batch: SettlementBatch | undefined;
      try {
        batch = await buildBatch(deps, plan, state.now, runId);
      } catch (error) {
        if (!(error instanceof OutOfTime)) throw error;
        state.unfinished = true;
        break;
      } finally {
        state.answerBytes -= bytes - (batch === undefined ? 0 : viewBytes(batch.transactionIds.length, batch.adjustments.length));
      }
      if (batch !== undefined) written.push(batch);
      if (batch === undefined || batch.lineCount !== plan.items.length) break;
    }
    return written;
  } finally {
    await deps.settlements.releaseGroup(group, runId);
  }
}

/**
 * One batch built invisibly and committed in one write (docs/settlement.md): started `building`, its lines reserved
 * slice by slice (the group's lease renewed before each), then committed with the lines it got. Lines taken or
 * changed meanwhile are left out; if what it got nets below zero (or to zero where the plan paid something), or the build was lost (its lease lapsed
 * and another run took the group), it is discarded and its lines wait again. A build cut off by a failure is left
 * `building`: the next run discards it once the lease lapses. Returns the batch made, if any.
 */
async function buildBatch(deps: SettlementDeps, plan: PlannedBatch, now: Date, runId: string): Promise<SettlementBatch | undefined> {
  const batch = newBatch(plan, now);
  const group = groupOf(plan);
  const discard = async () => {
    await deps.settlements.discardBuild(batch, deps.now().toISOString());
    countMetric('SettlementBuildsDiscarded');
    return undefined;
  };
  await deps.settlements.startBuild(batch, runId);
  const reserved: SettlementItem[] = [];
  for (let start = 0; start < plan.items.length; start += RESERVE_SLICE) {
    // Slower than the rate it started on: the rest would not be built before the deadline. The build is left for the
    // next run (this run's continuation) to discard, its group freed as the run leaves it (settleGroup), so that run
    // need not wait for the lease.
    if (!hasTimeFor(((plan.items.length - start) / BUILD_LINES_PER_SECOND) * 1000)) {
      logger.warn('A settlement build is left unfinished: the run is out of time; its continuation discards it and builds again', { batchId: batch.id, reserved: reserved.length, lines: plan.items.length });
      countMetric('SettlementBuildsOutOfTime');
      throw new OutOfTime();
    }
    if (!(await claimGroup(deps, group, runId))) return discard();
    reserved.push(...(await deps.settlements.reserveLines(batch, plan.items.slice(start, start + RESERVE_SLICE), runId)));
  }
  if (reserved.length < plan.items.length) countMetric('SettlementLinesTakenByAnotherRun', plan.items.length - reserved.length);
  const totals = totalsOf(reserved);
  // Never a negative payout; and a batch planned to pay something that lost lines down to nothing is not made.
  if (reserved.length === 0 || totals.netMinor < 0 || (totals.netMinor === 0 && plan.totals.netMinor > 0)) return discard();
  const made: SettlementBatch = { ...batch, ...contentsOf(reserved), totals };
  if ((await deps.settlements.commitBuild(made, reserved, runId, group)) === 'lost') return discard();
  return made;
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

const hasTimeFor = (workMs = 0) => (timeLeftMs() ?? Number.POSITIVE_INFINITY) > RUN_RESERVE_MS + workMs;

/** A planned batch as a batch record: its lines are the build's to reserve, its contents set when committed. */
function newBatch(plan: PlannedBatch, now: Date): SettlementBatch {
  const at = now.toISOString();
  return {
    id: randomUUID(),
    partnerId: plan.partnerId,
    clientId: plan.clientId,
    currency: plan.currency,
    transactionIds: [],
    adjustments: [],
    lineCount: 0,
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

export async function listBatchesFor(
  deps: SettlementDeps,
  caller: Caller,
  partnerId: string | undefined,
  filters: BatchFilters,
  page: { limit: number; cursor?: string | undefined },
): Promise<Page<SettlementBatch>> {
  return deps.settlements.listBatches(await partnerActedFor(deps.partners, caller, partnerId), filters, page);
}


/** A batch the caller may see, with its lines as they are read, a chunk at a time (its report). */
export async function batchReportFor(deps: SettlementDeps, caller: Caller, batchId: string): Promise<{ batch: SettlementBatch; lines: AsyncIterable<SettlementItem[]> }> {
  const batch = await getBatchFor(deps, caller, batchId);
  return { batch, lines: deps.settlements.batchLineChunks(batch.id) };
}
