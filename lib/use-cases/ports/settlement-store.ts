/**
 * What the settlement use cases (runs, reads, payouts) need from the store of batches, waiting entries, partners
 * and the audit log, and the outcomes its conditional writes answer with, in the service's terms. The DynamoDB
 * adapters (`lib/store/settlements.ts`, `settlement-waiting.ts`, `partners.ts`, `payees.ts`, `audit-events.ts`)
 * implement it; the invariants (one line in one batch, one payout per claim) are their conditional transactions.
 */
import type { AuditEvent } from '../../domain/audit';
import type { Page } from '../../domain/page';
import type { BatchFilters, SettlementBatch, SettlementItem } from '../../domain/settlement';
import type { PartnerReader } from './partner-readers';

/** The key of a group's lease: one run at a time builds the batches of a partner's client in one currency. */
export interface GroupKey {
  partnerId: string;
  clientId: string;
  currency: string;
}

/** A batch still building, or discarded and not yet released: what a run finds of a build cut off or given up. */
export interface BuildRecord extends GroupKey {
  id: string;
  status: 'building' | 'discarded';
  discardedAt: string | null;
}

/** `claimed` (the batch as it now is), or `refused` with the batch as it was (`undefined`: no such batch). */
export type PayoutClaim = { outcome: 'claimed'; batch: SettlementBatch } | { outcome: 'refused'; batch: SettlementBatch | undefined };

/** `recorded`, or `claim-lost`: the claim lapsed and another payout attempt holds (or ended) it; nothing written. */
export type PayoutRecord = 'recorded' | 'claim-lost';

export interface WaitingRead {
  /** Whole groups (client, currency): a group cut by the store's limit is left out whole, for the next run. */
  items: SettlementItem[];
  /** More waits than was read (the read's limit in entries or time): the run continues. */
  more: boolean;
  /**
   * The group of which `items` hold only the oldest payments (one group larger than a read; any other group the read
   * stopped in is left out whole): the run makes only its full batches, and reads the rest again with what follows.
   */
  partialGroup: Pick<GroupKey, 'clientId' | 'currency'> | undefined;
  /** Succeeded transactions waiting without a fee split: never paid on a guess, reported instead. */
  withoutFees: string[];
}

export interface SettlementStore {
  /**
   * Everything of one partner waiting for settlement (optionally one client's): the ledger entries of payments
   * created before `cutoff`; with no cutoff, everything waiting. Bounded in size and in the request's time: what
   * is left out waits for the next run.
   */
  listWaiting(partnerId: string, clientId: string | undefined, cutoff: string | undefined): Promise<WaitingRead>;
  /**
   * What a merchant owes in one currency now (0 when it owes nothing): its waiting reversals less its waiting sales,
   * the lines that builds in progress hold reserved counted as waiting, as `GET /balances` counts them.
   */
  owedMinor(group: GroupKey): Promise<number>;
  /** Starts a batch's build: its record, `building`, invisible to every reader, committable by `runId` only. */
  startBuild(batch: SettlementBatch, runId: string): Promise<void>;
  /**
   * Reserves lines for a building batch, each by its own conditional write: only a line still waiting, and a sale as
   * the run read it, and only while the build is still `building` and `runId`'s. Returns those reserved (a write whose
   * answer was lost included); no line is ever reserved by two batches, nor into a discarded build.
   */
  reserveLines(batch: Pick<SettlementBatch, 'id' | 'partnerId' | 'createdAt'>, lines: readonly SettlementItem[], runId: string): Promise<SettlementItem[]>;
  /**
   * Writes a built batch's contents, then makes it `pending` and visible in one conditional write (still this run's
   * build, and the group's lease still this run's). `lost`: nothing visible; the caller discards the build.
   */
  commitBuild(batch: SettlementBatch, lines: readonly SettlementItem[], runId: string, group: GroupKey): Promise<'committed' | 'lost'>;
  /** A partner's builds left building or discarded (usually none). */
  listBuilds(partnerId: string): Promise<BuildRecord[]>;
  /**
   * Discards a build (resumably): `discarded`, its lines waiting again; a batch committed meanwhile is left alone;
   * `unfinished` when the request's time ran out with lines still to move back (the next discard goes on).
   */
  discardBuild(build: Pick<BuildRecord, 'id' | 'partnerId'>, now: string): Promise<'discarded' | 'committed' | 'unfinished'>;
  /** Takes a released discarded build off the partner's builds. */
  forgetBuild(buildId: string): Promise<void>;
  /** Takes (or renews) a group's lease until `expiresAt`: none held, lapsed, or already this run's. */
  claimGroup(group: GroupKey, runId: string, expiresAt: string, now: string): Promise<boolean>;
  /** Gives a group's lease back, if still this run's. */
  releaseGroup(group: GroupKey, runId: string): Promise<void>;
  /** Every line of a batch, in its order (its report), a chunk at a time. */
  batchLineChunks(batchId: string): AsyncIterable<SettlementItem[]>;
  getBatch(batchId: string): Promise<SettlementBatch | undefined>;
  /** One partner's batches, or (no partner) every partner's; newest first, filtered, paged. */
  listBatches(partnerId: string | undefined, filters: BatchFilters, page: { limit: number; cursor?: string | undefined }): Promise<Page<SettlementBatch>>;
  /**
   * Claims a `pending` or `failed` batch with no live claim for one payout attempt; two concurrent pays cannot
   * both hold it. With `audit`, the event is recorded if and only if the claim is taken.
   */
  claimPayout(batchId: string, claim: { id: string; expiresAt: string }, now: string, audit?: AuditEvent): Promise<PayoutClaim>;
  /** Gives a claim back without a payout attempt: only the claim goes. */
  releasePayoutClaim(batch: SettlementBatch, claimId: string, now: string): Promise<void>;
  /** The payout made: the batch `sent` with its transfer, on the claim (its lines read `paid` with it). */
  recordPayoutSent(batch: SettlementBatch, claimId: string, transferId: string | null, now: string): Promise<PayoutRecord>;
  /** The payout refused, or its outcome unknown: `failed`, with the reason partners see and the detail operators do. */
  recordPayoutFailed(batch: SettlementBatch, claimId: string, failure: { reason: string; detail: string }, now: string): Promise<PayoutRecord>;
}

export interface PartnerDirectory extends PartnerReader {
  /** Every partner's id, read page by page: for a run over all of them. */
  allPartnerIds(): AsyncIterable<string>;
}

export interface AuditLog {
  /** Records an event on its own (what an admin is about to run). */
  recordAuditEvent(event: AuditEvent): Promise<void>;
}

/** What a run left, for the continuation to go on with: the same scope, the same cutoff. */
export interface RunContinuation {
  scope: { partnerId?: string | undefined; clientId?: string | undefined };
  cutoff: string;
  /** The continuation's rank: 1 for the first after the run. */
  attempt: number;
}

export interface SettlementContinuations {
  /**
   * Sends what a run left to the worker that continues it (a queue message), unless a continuation of the same scope
   * is already waiting to run (`pending`: that one settles the rest), so that a caller repeating its runs cannot fill
   * the queue.
   */
  continueRun(next: RunContinuation): Promise<'sent' | 'pending'>;
  /** A continuation of `scope` has started: the next run of that scope that cannot finish may send another. */
  started(scope: RunContinuation['scope']): Promise<void>;
}
