/**
 * The settlement run's handling of its store's answers, with the store faked in memory: lines taken by another run
 * while a batch is built, a build that no longer nets above zero, a commit lost to another run, a group another run
 * holds, builds left by runs that were cut off, and a failure of one group or one partner, which must not lose the
 * rest of the run. The fake keeps the port's invariants (a line in one build at most; a commit only by the build's
 * run, under its lease), so what the run leaves behind is checked as well as what it answers.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { runWithDeadline } from '../../../lib/deadline';
import { currencyCode } from '../../../lib/domain/money';
import type { SettlementBatch, SettlementItem } from '../../../lib/domain/settlement';
import type { BuildRecord, GroupKey, RunContinuation, SettlementStore, WaitingRead } from '../../../lib/use-cases/ports/settlement-store';
import { runSettlement, settle, type SettlementDeps } from '../../../lib/use-cases/settlements';

/** The runs' group lease (`SETTLEMENT_GROUP_LEASE_SECONDS`, 60 by default). */
const GROUP_LEASE_MS = 60_000;

const NOW = new Date('2026-11-23T10:00:00.000Z');
const at = (seconds: number) => new Date(Date.UTC(2026, 10, 1) + seconds * 1000).toISOString();

/** The sale of payment `n` (net 941), still `succeeded`. */
const line = (n: number, clientId = 'shop-1', partnerId = 'ptr_a'): SettlementItem => ({
  type: 'transaction',
  key: 'sale',
  cause: `pi_${n}`,
  svcTxId: `svc_tx_${n}`,
  partnerId,
  clientId,
  partnerReference: `order-${n}`,
  currency: currencyCode('EUR'),
  txCreatedAt: at(n),
  createdAt: at(n),
  grossMinor: 1000,
  processorFeeMinor: 29,
  platformFeeMinor: 30,
  svcEarningMinor: 15,
  netMinor: 941,
  settlesTransaction: true,
});

/** A refund entry of payment `n` reversing `grossMinor` of it (processor and platform fees reversed 3 % each). */
const refundLine = (n: number, grossMinor: number, clientId = 'shop-1'): SettlementItem => ({
  ...line(n, clientId),
  type: 'refund',
  key: `refund#${String(grossMinor).padStart(12, '0')}`,
  cause: `re_${n}`,
  createdAt: at(n + 86_400),
  grossMinor: -grossMinor,
  processorFeeMinor: -Math.round(grossMinor * 0.03),
  platformFeeMinor: -Math.round(grossMinor * 0.03),
  svcEarningMinor: 0,
  netMinor: -(grossMinor - 2 * Math.round(grossMinor * 0.03)),
  settlesTransaction: false,
});

const lineId = (it: Pick<SettlementItem, 'svcTxId' | 'key'>) => `${it.svcTxId}#${it.key}`;
const groupName = (group: GroupKey) => `${group.partnerId}/${group.clientId}/${group.currency}`;
const sales = (from: number, count: number, clientId = 'shop-1') => Array.from({ length: count }, (_, i) => line(from + i, clientId));

interface Build {
  batch: SettlementBatch;
  runId: string | null;
  status: 'building' | 'pending' | 'discarded';
  discardedAt: string | null;
  forgotten: boolean;
  /** Its lines as committed (a pending batch). */
  lines: SettlementItem[];
}

/** What a test scripts of the store: each hook may throw to inject a failure. */
interface Script {
  /** Lines another run took before this one reserved them: `reserveLines` leaves them out (and they no longer wait). */
  takenByAnotherRun?: (item: SettlementItem) => boolean;
  /** Called before each `reserveLines` (the n-th of the run, from 1), e.g. to let another run take the lease. */
  beforeReserve?: (batch: Pick<SettlementBatch, 'id' | 'clientId'>, n: number, store: FakeSettlementStore) => void;
  /** `lost` to refuse a commit whatever the lease; may throw. */
  commit?: (batch: SettlementBatch) => 'lost' | undefined;
  /** May throw (a start that failed). */
  startBuild?: (batch: SettlementBatch) => void;
  /** `listWaiting` says more waits than it read (its limit). */
  moreWaiting?: boolean;
  /** Discards run out of time: the build's lines stay reserved, `unfinished`. */
  discardUnfinished?: boolean;
  /** `listWaiting` read only the oldest part of this client's group (EUR). */
  partialGroup?: string;
  /** The continuation queue refuses the message. */
  continuationFails?: boolean;
}

const notUsed = (name: string) => async (): Promise<never> => {
  throw new Error(`${name} is not used by a settlement run`);
};

/**
 * An in-memory settlement store: what waits per partner (a partner with nothing listed fails to be read), the
 * builds and batches, the groups' leases, and every call made, in order.
 */
class FakeSettlementStore implements SettlementStore {
  readonly calls: string[] = [];
  /** The cutoff of each `listWaiting`. */
  readonly cutoffs: Array<string | undefined> = [];
  readonly builds = new Map<string, Build>();
  /** Which build (or `another-run`) holds each line reserved. */
  readonly reservedBy = new Map<string, string>();
  readonly leases = new Map<string, { runId: string; expiresAt: string }>();
  private reserves = 0;

  constructor(
    private readonly waiting: Record<string, SettlementItem[]>,
    private readonly script: Script = {},
  ) {}

  /** The lines of a partner still waiting (reserved by no build), in the order given. */
  stillWaiting(partnerId: string): string[] {
    return (this.waiting[partnerId] ?? []).filter((item) => !this.reservedBy.has(lineId(item))).map(lineId);
  }

  /** Another run's live lease on a group (a run that holds it until after the test). */
  holdGroup(group: GroupKey, runId = 'another-run') {
    this.leases.set(groupName(group), { runId, expiresAt: new Date(NOW.getTime() + 10 * GROUP_LEASE_MS).toISOString() });
  }

  /** A build left by an earlier run, with the lines it had reserved. */
  leaveBuild(batch: Pick<SettlementBatch, 'id' | 'partnerId' | 'clientId' | 'currency'>, lines: SettlementItem[], status: 'building' | 'discarded', discardedAt: string | null = null) {
    this.builds.set(batch.id, { batch: { ...batch, createdAt: at(0) } as SettlementBatch, runId: 'crashed-run', status, discardedAt, forgotten: false, lines: [] });
    for (const item of lines) this.reservedBy.set(lineId(item), batch.id);
  }

  committed(): Build[] {
    return [...this.builds.values()].filter((build) => build.status === 'pending');
  }

  callsOf(verb: string): string[] {
    return this.calls.filter((call) => call.startsWith(`${verb} `)).map((call) => call.slice(verb.length + 1));
  }

  async listWaiting(partnerId: string, clientId: string | undefined, cutoff?: string): Promise<WaitingRead> {
    this.calls.push(`listWaiting ${partnerId}`);
    this.cutoffs.push(cutoff);
    const items = this.waiting[partnerId];
    if (items === undefined) throw new Error(`listing ${partnerId} failed`);
    return {
      items: items.filter((item) => !this.reservedBy.has(lineId(item)) && (clientId === undefined || item.clientId === clientId)),
      withoutFees: [],
      more: this.script.moreWaiting === true,
      partialGroup: this.script.partialGroup === undefined ? undefined : { clientId: this.script.partialGroup, currency: currencyCode('EUR') },
    };
  }

  /** Waiting, and reserved by a build not committed (its lines wait until it commits), as the store counts them. */
  async owedMinor(group: GroupKey): Promise<number> {
    const waits = (item: SettlementItem) => {
      const holder = this.reservedBy.get(lineId(item));
      return holder === undefined || this.builds.get(holder)?.status === 'building';
    };
    const net = (this.waiting[group.partnerId] ?? [])
      .filter((item) => item.clientId === group.clientId && item.currency === group.currency && waits(item))
      .reduce((sum, item) => sum + item.netMinor, 0);
    return Math.max(0, -net);
  }

  async startBuild(batch: SettlementBatch, runId: string): Promise<void> {
    this.calls.push(`startBuild ${batch.id} ${batch.clientId}`);
    this.script.startBuild?.(batch);
    if (this.builds.has(batch.id)) throw new Error(`build ${batch.id} started twice`);
    this.builds.set(batch.id, { batch, runId, status: 'building', discardedAt: null, forgotten: false, lines: [] });
  }

  async reserveLines(batch: Pick<SettlementBatch, 'id' | 'partnerId' | 'createdAt'>, lines: readonly SettlementItem[], runId: string): Promise<SettlementItem[]> {
    const build = this.builds.get(batch.id);
    this.calls.push(`reserveLines ${batch.id} ${lines.length}`);
    this.script.beforeReserve?.(build?.batch ?? (batch as SettlementBatch), ++this.reserves, this);
    // As the store's check in every reservation: nothing goes into a build that is no longer this run's.
    if (build?.status !== 'building' || build.runId !== runId) return [];
    const reserved: SettlementItem[] = [];
    for (const item of lines) {
      if (this.script.takenByAnotherRun?.(item) === true && !this.reservedBy.has(lineId(item))) this.reservedBy.set(lineId(item), 'another-run');
      if (this.reservedBy.has(lineId(item))) continue;
      this.reservedBy.set(lineId(item), batch.id);
      reserved.push(item);
    }
    return reserved;
  }

  async commitBuild(batch: SettlementBatch, lines: readonly SettlementItem[], runId: string, group: GroupKey): Promise<'committed' | 'lost'> {
    this.calls.push(`commitBuild ${batch.id} ${lines.length}`);
    const scripted = this.script.commit?.(batch);
    const build = this.builds.get(batch.id);
    const lease = this.leases.get(groupName(group));
    if (scripted === 'lost' || build?.status !== 'building' || build.runId !== runId || lease?.runId !== runId) return 'lost';
    const notReserved = lines.filter((item) => this.reservedBy.get(lineId(item)) !== batch.id);
    if (notReserved.length > 0) throw new Error(`committing lines the build did not reserve: ${notReserved.map(lineId).join(', ')}`);
    Object.assign(build, { batch, status: 'pending', lines: [...lines] });
    return 'committed';
  }

  async listBuilds(partnerId: string): Promise<BuildRecord[]> {
    this.calls.push(`listBuilds ${partnerId}`);
    return [...this.builds.values()]
      .filter((build) => build.batch.partnerId === partnerId && !build.forgotten && build.status !== 'pending')
      .map(({ batch, status, discardedAt }) => ({ id: batch.id, partnerId: batch.partnerId, clientId: batch.clientId, currency: batch.currency, status: status as BuildRecord['status'], discardedAt }));
  }

  async discardBuild(build: Pick<BuildRecord, 'id' | 'partnerId'>, now: string): Promise<'discarded' | 'committed' | 'unfinished'> {
    this.calls.push(`discardBuild ${build.id}`);
    const stored = this.builds.get(build.id);
    if (stored === undefined) throw new Error(`no build ${build.id}`);
    if (stored.status === 'pending') return 'committed';
    Object.assign(stored, { status: 'discarded', runId: null, discardedAt: stored.discardedAt ?? now });
    if (this.script.discardUnfinished === true) return 'unfinished';
    for (const [id, holder] of this.reservedBy) if (holder === build.id) this.reservedBy.delete(id);
    return 'discarded';
  }

  async forgetBuild(buildId: string): Promise<void> {
    this.calls.push(`forgetBuild ${buildId}`);
    const stored = this.builds.get(buildId);
    if (stored?.status === 'discarded') stored.forgotten = true;
  }

  async claimGroup(group: GroupKey, runId: string, expiresAt: string, now: string): Promise<boolean> {
    this.calls.push(`claimGroup ${groupName(group)}`);
    const lease = this.leases.get(groupName(group));
    if (lease !== undefined && lease.expiresAt >= now && lease.runId !== runId) return false;
    this.leases.set(groupName(group), { runId, expiresAt });
    return true;
  }

  async releaseGroup(group: GroupKey, runId: string): Promise<void> {
    this.calls.push(`releaseGroup ${groupName(group)}`);
    if (this.leases.get(groupName(group))?.runId === runId) this.leases.delete(groupName(group));
  }

  async *batchLineChunks(batchId: string): AsyncGenerator<SettlementItem[]> {
    yield this.builds.get(batchId)?.lines ?? [];
  }

  getBatch = notUsed('getBatch');
  listBatches = notUsed('listBatches');
  claimPayout = notUsed('claimPayout');
  releasePayoutClaim = notUsed('releasePayoutClaim');
  recordPayoutSent = notUsed('recordPayoutSent');
  recordPayoutFailed = notUsed('recordPayoutFailed');
}

/** Deps over a fake store of `waiting`; a run over every partner also meets `ptr_broken`, whose read fails. */
function depsWith(waiting: Record<string, SettlementItem[]>, script: Script = {}) {
  const store = new FakeSettlementStore(waiting, script);
  const continued: RunContinuation[] = [];
  const deps = {
    settlements: store,
    continuations: {
      continueRun: async (next: RunContinuation) => {
        if (script.continuationFails === true) throw new Error('the queue is down');
        continued.push(next);
        return 'sent' as const;
      },
      started: async (scope: RunContinuation['scope']) => void store.calls.push(`continuationStarted ${JSON.stringify(scope)}`),
    },
    partners: {
      allPartnerIds: async function* () {
        yield* Object.keys(waiting).concat(['ptr_broken']);
      },
    },
    cutoff: 'now',
    groupLeaseMs: GROUP_LEASE_MS,
    now: () => NOW,
  } as unknown as SettlementDeps;
  return { deps, store, continued };
}

const shop = (clientId: string): GroupKey => ({ partnerId: 'ptr_a', clientId, currency: 'EUR' });
const sale = { grossMinor: 1000, processorFeesMinor: 29, platformFeesMinor: 30, netMinor: 941 };
const times = (count: number, totals: typeof sale) => ({
  grossMinor: count * totals.grossMinor,
  processorFeesMinor: count * totals.processorFeesMinor,
  platformFeesMinor: count * totals.platformFeesMinor,
  netMinor: count * totals.netMinor,
});

describe('runSettlement', () => {
  it('builds a batch under the group`s lease and commits it with its lines: the batch answered is the one committed, its lines no longer wait', async () => {
    const { deps, store } = depsWith({ ptr_a: [line(2), line(1)] });

    const created = await runSettlement(deps, { partnerId: 'ptr_a' });

    expect(created).toHaveLength(1);
    const [batch] = created as [SettlementBatch];
    expect(batch).toMatchObject({ partnerId: 'ptr_a', clientId: 'shop-1', currency: 'EUR', status: 'pending', rail: 'railA', transactionIds: ['svc_tx_1', 'svc_tx_2'], adjustments: [], lineCount: 2 });
    expect(batch.totals).toEqual(times(2, sale));
    expect(store.committed().map((build) => [build.batch, build.lines.map(lineId)])).toEqual([[batch, ['svc_tx_1#sale', 'svc_tx_2#sale']]]);
    expect(store.calls).toEqual([
      'listBuilds ptr_a',
      'listWaiting ptr_a',
      'claimGroup ptr_a/shop-1/EUR',
      `startBuild ${batch.id} shop-1`,
      'claimGroup ptr_a/shop-1/EUR',
      `reserveLines ${batch.id} 2`,
      `commitBuild ${batch.id} 2`,
      'releaseGroup ptr_a/shop-1/EUR',
    ]);
    expect(store.stillWaiting('ptr_a')).toEqual([]);
    expect(store.leases.size).toBe(0);
  });

  it('leaves out the lines another run took while it reserved, and totals exactly what it reserved', async () => {
    const { deps, store } = depsWith({ ptr_a: [line(1), line(2), line(3)] }, { takenByAnotherRun: (item) => item.svcTxId === 'svc_tx_2' });

    const [batch, ...others] = await runSettlement(deps, { partnerId: 'ptr_a' });

    expect(others).toEqual([]);
    expect(batch?.transactionIds).toEqual(['svc_tx_1', 'svc_tx_3']);
    expect(batch?.lineCount).toBe(2);
    expect(batch?.totals).toEqual({ grossMinor: 2000, processorFeesMinor: 58, platformFeesMinor: 60, netMinor: 1882 });
    expect(store.callsOf('commitBuild')).toEqual([`${batch?.id} 2`]);
    expect(store.builds.get(batch?.id as string)?.lines.map(lineId)).toEqual(['svc_tx_1#sale', 'svc_tx_3#sale']);
    expect(store.reservedBy.get('svc_tx_2#sale')).toBe('another-run');
  });

  it('discards a build whose reserved lines no longer net above zero: no batch, and its lines wait again', async () => {
    // Planned: 941 + 941 - 1,410 = 472. Without svc_tx_2 (taken), 941 - 1,410 < 0: the build is given up.
    const { deps, store } = depsWith({ ptr_a: [refundLine(0, 1500), line(1), line(2)] }, { takenByAnotherRun: (item) => item.svcTxId === 'svc_tx_2' });

    const created = await runSettlement(deps, { partnerId: 'ptr_a' });

    expect(created).toEqual([]);
    const [started] = store.callsOf('startBuild').map((call) => call.split(' ')[0] as string);
    expect(store.builds.get(started as string)?.batch.totals.netMinor).toBe(472);
    expect(store.callsOf('reserveLines')).toEqual([`${started} 3`]);
    expect(store.callsOf('commitBuild')).toEqual([]);
    expect(store.callsOf('discardBuild')).toEqual([started]);
    expect(store.builds.get(started as string)?.status).toBe('discarded');
    expect(store.stillWaiting('ptr_a')).toEqual(['svc_tx_0#refund#000000001500', 'svc_tx_1#sale']);
  });

  it('discards a build that got none of its lines', async () => {
    const { deps, store } = depsWith({ ptr_a: [line(1), line(2)] }, { takenByAnotherRun: () => true });

    await expect(runSettlement(deps, { partnerId: 'ptr_a' })).resolves.toEqual([]);

    const [started] = store.callsOf('startBuild').map((call) => call.split(' ')[0] as string);
    expect(store.callsOf('commitBuild')).toEqual([]);
    expect(store.callsOf('discardBuild')).toEqual([started]);
  });

  it('discards a build whose commit is lost, answering no batch for it, and its lines wait again', async () => {
    const { deps, store } = depsWith({ ptr_a: [line(1, 'shop-1'), line(2, 'shop-2')] }, { commit: (batch) => (batch.clientId === 'shop-1' ? 'lost' : undefined) });

    const created = await runSettlement(deps, { partnerId: 'ptr_a' });

    expect(created.map((batch) => [batch.clientId, batch.transactionIds])).toEqual([['shop-2', ['svc_tx_2']]]);
    const lost = [...store.builds.values()].find((build) => build.batch.clientId === 'shop-1');
    expect(lost?.status).toBe('discarded');
    expect(store.callsOf('commitBuild')).toContain(`${lost?.batch.id} 1`);
    expect(store.callsOf('discardBuild')).toEqual([lost?.batch.id]);
    expect(store.stillWaiting('ptr_a')).toEqual(['svc_tx_1#sale']);
  });

  it('loses a build whose lease another run took after its last renewal: the commit is refused, the build discarded, the other run`s lease kept', async () => {
    const { deps, store } = depsWith({ ptr_a: [line(1), line(2)] }, { beforeReserve: (_batch, _n, fake) => fake.holdGroup(shop('shop-1'), 'overtaking-run') });

    const created = await runSettlement(deps, { partnerId: 'ptr_a' });

    expect(created).toEqual([]);
    const [build] = [...store.builds.values()];
    expect(store.callsOf('commitBuild')).toEqual([`${build?.batch.id} 2`]);
    expect(build?.status).toBe('discarded');
    expect(store.stillWaiting('ptr_a')).toEqual(['svc_tx_1#sale', 'svc_tx_2#sale']);
    expect(store.leases.get('ptr_a/shop-1/EUR')?.runId).toBe('overtaking-run');
  });

  it('reserves a large batch 1,000 lines at a time, renewing the lease before each slice, then builds the next batch of the group', async () => {
    // 10,050 sales: 10,000 (the oldest) in one batch, the other 50 in a second.
    const { deps, store } = depsWith({ ptr_a: sales(1, 10_050) });

    const created = await runSettlement(deps, { partnerId: 'ptr_a' });

    expect(created.map((batch) => [batch.lineCount, batch.transactionIds[0], batch.transactionIds.at(-1)])).toEqual([
      [10_000, 'svc_tx_1', 'svc_tx_10000'],
      [50, 'svc_tx_10001', 'svc_tx_10050'],
    ]);
    expect(created.map((batch) => batch.totals)).toEqual([times(10_000, sale), times(50, sale)]);
    const [first, second] = created.map((batch) => batch.id);
    const slice = (id: string | undefined, count: number) => ['claimGroup ptr_a/shop-1/EUR', `reserveLines ${id} ${count}`];
    expect(store.calls.slice(2)).toEqual([
      'claimGroup ptr_a/shop-1/EUR',
      `startBuild ${first} shop-1`,
      ...Array.from({ length: 10 }, () => slice(first, 1_000)).flat(),
      `commitBuild ${first} 10000`,
      `startBuild ${second} shop-1`,
      ...slice(second, 50),
      `commitBuild ${second} 50`,
      'releaseGroup ptr_a/shop-1/EUR',
    ]);
    expect(store.stillWaiting('ptr_a')).toEqual([]);
  });

  it('stops a group`s later batches when one got fewer lines than planned: they wait for the next run', async () => {
    const { deps, store } = depsWith({ ptr_a: sales(1, 10_050) }, { takenByAnotherRun: (item) => item.svcTxId === 'svc_tx_5' });

    const created = await runSettlement(deps, { partnerId: 'ptr_a' });

    expect(created.map((batch) => batch.lineCount)).toEqual([9_999]);
    expect(created[0]?.transactionIds).not.toContain('svc_tx_5');
    expect(created[0]?.totals).toEqual(times(9_999, sale));
    expect(store.callsOf('startBuild')).toEqual([`${created[0]?.id} shop-1`]);
    expect(store.stillWaiting('ptr_a')).toEqual(sales(10_001, 50).map(lineId));
  });

  it('discards a build whose lease could not be renewed mid-way (another run took the group), and leaves that run`s lease', async () => {
    // Before the third slice of 1,000, another run holds the group: the renewal fails.
    const { deps, store } = depsWith({ ptr_a: sales(1, 10_050) }, { beforeReserve: (_batch, n, fake) => (n === 2 ? fake.holdGroup(shop('shop-1'), 'overtaking-run') : undefined) });

    const created = await runSettlement(deps, { partnerId: 'ptr_a' });

    expect(created).toEqual([]);
    const [build] = [...store.builds.values()];
    expect(store.callsOf('reserveLines')).toEqual([`${build?.batch.id} 1000`, `${build?.batch.id} 1000`]);
    expect(store.callsOf('commitBuild')).toEqual([]);
    expect(store.callsOf('discardBuild')).toEqual([build?.batch.id]);
    expect(store.stillWaiting('ptr_a')).toHaveLength(10_050);
    expect(store.leases.get('ptr_a/shop-1/EUR')?.runId).toBe('overtaking-run');
  });

  it('skips a group another run holds, and settles the partner`s other groups', async () => {
    const { deps, store } = depsWith({ ptr_a: [line(1, 'shop-1'), line(2, 'shop-2'), line(3, 'shop-3')] });
    store.holdGroup(shop('shop-1'));

    const created = await runSettlement(deps, { partnerId: 'ptr_a' });

    expect(created.map((batch) => [batch.clientId, batch.transactionIds]).sort()).toEqual([
      ['shop-2', ['svc_tx_2']],
      ['shop-3', ['svc_tx_3']],
    ]);
    expect(store.callsOf('claimGroup').filter((group) => group === 'ptr_a/shop-1/EUR')).toHaveLength(1);
    expect(store.callsOf('startBuild').map((call) => call.split(' ')[1]).sort()).toEqual(['shop-2', 'shop-3']);
    expect(store.callsOf('releaseGroup')).not.toContain('ptr_a/shop-1/EUR');
    expect(store.leases.get('ptr_a/shop-1/EUR')?.runId).toBe('another-run');
    expect(store.stillWaiting('ptr_a')).toEqual(['svc_tx_1#sale']);
  });

  it('keeps the batches it made when another group`s build or another partner`s read fails', async () => {
    const { deps, store } = depsWith(
      { ptr_a: [line(1, 'shop-1'), line(2, 'shop-2'), line(3, 'shop-3'), line(4, 'shop-4')] },
      {
        beforeReserve: (batch) => {
          if (batch.clientId === 'shop-1') throw new Error('reserve failed');
        },
        commit: (batch) => {
          if (batch.clientId === 'shop-2') throw new Error('commit failed');
          return undefined;
        },
        startBuild: (batch) => {
          if (batch.clientId === 'shop-3') throw new Error('start failed');
        },
      },
    );

    const created = await runSettlement(deps, {});

    expect(created.map((batch) => [batch.clientId, batch.transactionIds])).toEqual([['shop-4', ['svc_tx_4']]]);
    expect(store.calls).toContain('listWaiting ptr_broken');
    // Each failed group's lease is given back: the next run takes it at once (and discards what it left building).
    expect(store.callsOf('releaseGroup').sort()).toEqual(['ptr_a/shop-1/EUR', 'ptr_a/shop-2/EUR', 'ptr_a/shop-3/EUR', 'ptr_a/shop-4/EUR']);
    expect(store.leases.size).toBe(0);
    expect([...store.builds.values()].map((build) => [build.batch.clientId, build.status]).sort()).toEqual([
      ['shop-1', 'building'],
      ['shop-2', 'building'],
      ['shop-4', 'pending'],
    ]);
  });

  it('keeps what it made when the list of partners fails part-way', async () => {
    const { deps } = depsWith({ ptr_a: [line(1)] });
    deps.partners.allPartnerIds = async function* () {
      yield 'ptr_a';
      throw new Error('partner page read failed');
    };

    const created = await runSettlement(deps, {});

    expect(created.map((batch) => batch.transactionIds)).toEqual([['svc_tx_1']]);
  });

  it('fails as a whole, with the first failure, only when it made nothing (a table that is down is a 503, not "nothing to settle")', async () => {
    const down = new Error('table unavailable');
    const { deps, store } = depsWith(
      { ptr_a: [line(1, 'shop-1'), line(2, 'shop-2')] },
      {
        startBuild: (batch) => {
          if (batch.clientId === 'shop-1') throw down;
        },
        beforeReserve: () => {
          throw new Error('later failure');
        },
      },
    );

    await expect(runSettlement(deps, {})).rejects.toBe(down);
    expect(store.committed()).toEqual([]);
  });

  it('settles a refund of a sale not yet settled in the same batch as its sale: nothing is held back', async () => {
    const { deps, store } = depsWith({ ptr_a: [refundLine(1, 400), line(2), line(1)] });

    const created = await runSettlement(deps, { partnerId: 'ptr_a' });

    expect(created).toHaveLength(1);
    const [batch] = created as [SettlementBatch];
    expect(store.builds.get(batch.id)?.lines.map(lineId)).toEqual(['svc_tx_1#sale', 'svc_tx_1#refund#000000000400', 'svc_tx_2#sale']);
    expect(batch.transactionIds).toEqual(['svc_tx_1', 'svc_tx_2']);
    expect(batch.adjustments.map(lineId)).toEqual(['svc_tx_1#refund#000000000400']);
    expect(batch.lineCount).toBe(3);
    expect(batch.totals).toEqual({ grossMinor: 1600, processorFeesMinor: 46, platformFeesMinor: 48, netMinor: 1506 });
  });

  it('makes no batch for a merchant whose waiting entries net below zero (it owes), and settles the partner`s other merchants', async () => {
    const { deps, store } = depsWith({ ptr_a: [line(1, 'shop-1'), refundLine(0, 2000, 'shop-1'), line(2, 'shop-2')] });

    const created = await runSettlement(deps, { partnerId: 'ptr_a' });

    expect(created.map((batch) => [batch.clientId, batch.transactionIds])).toEqual([['shop-2', ['svc_tx_2']]]);
    expect(store.callsOf('claimGroup')).not.toContain('ptr_a/shop-1/EUR');
    expect(store.callsOf('startBuild').map((call) => call.split(' ')[1])).toEqual(['shop-2']);
    expect(store.stillWaiting('ptr_a')).toEqual(['svc_tx_1#sale', 'svc_tx_0#refund#000000002000']);
  });

  it('answers an empty run, not a failure, when the only merchant owes', async () => {
    const { deps, store } = depsWith({ ptr_a: [line(1), refundLine(0, 2000)] });

    await expect(runSettlement(deps, { partnerId: 'ptr_a' })).resolves.toEqual([]);
    expect(store.callsOf('startBuild')).toEqual([]);
  });

  it('settles no part of a group whose old build it could not discard in its time, and goes on by itself', async () => {
    // Arrange: shop-1's build holds svc_tx_1 and its discard runs out of time; svc_tx_3 of shop-1 and svc_tx_2 of shop-2 wait
    const { deps, store, continued } = depsWith({ ptr_a: [line(1, 'shop-1'), line(2, 'shop-2'), line(3, 'shop-1')] }, { discardUnfinished: true });
    store.leaveBuild({ id: 'stale_1', partnerId: 'ptr_a', clientId: 'shop-1', currency: currencyCode('EUR') }, [line(1, 'shop-1')], 'building');
    store.leases.set('ptr_a/shop-1/EUR', { runId: 'crashed-run', expiresAt: new Date(NOW.getTime() - 1).toISOString() });

    const run = await settle(deps, { partnerId: 'ptr_a' });

    expect(run.batches.map((batch) => [batch.clientId, batch.transactionIds])).toEqual([['shop-2', ['svc_tx_2']]]);
    expect(run.continuing).toBe(true);
    expect(continued).toHaveLength(1);
  });

  it('discards the builds that runs cut off left, before reading what waits, so their lines are settled by this run; a group a live run holds is left alone', async () => {
    // Arrange: a build left building on shop-1 with svc_tx_1 reserved (its run died, its lease lapsed); another on
    // shop-2 with svc_tx_2, whose group a live run still holds.
    const { deps, store } = depsWith({ ptr_a: [line(1, 'shop-1'), line(2, 'shop-2'), line(3, 'shop-1')] });
    store.leaveBuild({ id: 'stale_1', partnerId: 'ptr_a', clientId: 'shop-1', currency: currencyCode('EUR') }, [line(1, 'shop-1')], 'building');
    store.leaveBuild({ id: 'live_2', partnerId: 'ptr_a', clientId: 'shop-2', currency: currencyCode('EUR') }, [line(2, 'shop-2')], 'building');
    store.leases.set('ptr_a/shop-1/EUR', { runId: 'crashed-run', expiresAt: new Date(NOW.getTime() - 1).toISOString() });
    store.holdGroup(shop('shop-2'), 'live-run');

    // Act
    const created = await runSettlement(deps, { partnerId: 'ptr_a' });

    // Assert: stale_1 discarded (its group claimed, then released) before the read; live_2 untouched.
    expect(store.calls.slice(0, 7)).toEqual([
      'listBuilds ptr_a',
      'claimGroup ptr_a/shop-1/EUR',
      'discardBuild stale_1',
      'releaseGroup ptr_a/shop-1/EUR',
      'claimGroup ptr_a/shop-2/EUR',
      'listWaiting ptr_a',
      'claimGroup ptr_a/shop-1/EUR',
    ]);
    expect(store.callsOf('discardBuild')).toEqual(['stale_1']);
    expect(store.builds.get('stale_1')?.status).toBe('discarded');
    expect(store.builds.get('live_2')?.status).toBe('building');
    expect(store.reservedBy.get('svc_tx_2#sale')).toBe('live_2');
    expect(store.leases.get('ptr_a/shop-2/EUR')?.runId).toBe('live-run');
    expect(created.map((batch) => [batch.clientId, batch.transactionIds])).toEqual([['shop-1', ['svc_tx_1', 'svc_tx_3']]]);
    // Discarded just now: not yet forgotten (a run cut off might still be reserving for it).
    expect(store.callsOf('forgetBuild')).toEqual([]);
  });

  it('forgets a discarded build once a lease has passed since its discard, and not before', async () => {
    const { deps, store } = depsWith({ ptr_a: [line(1)] });
    const currency = currencyCode('EUR');
    store.leaveBuild({ id: 'old_discard', partnerId: 'ptr_a', clientId: 'shop-1', currency }, [], 'discarded', new Date(NOW.getTime() - GROUP_LEASE_MS - 1).toISOString());
    store.leaveBuild({ id: 'new_discard', partnerId: 'ptr_a', clientId: 'shop-1', currency }, [], 'discarded', new Date(NOW.getTime() - GROUP_LEASE_MS + 1000).toISOString());

    const created = await runSettlement(deps, { partnerId: 'ptr_a' });

    expect(store.callsOf('discardBuild').slice(0, 2)).toEqual(['old_discard', 'new_discard']);
    expect(store.callsOf('forgetBuild')).toEqual(['old_discard']);
    expect((await store.listBuilds('ptr_a')).map((build) => build.id)).toEqual(['new_discard']);
    expect(created.map((batch) => batch.transactionIds)).toEqual([['svc_tx_1']]);
  });

  it('leaves the builds of other clients alone in a run of one client', async () => {
    const { deps, store } = depsWith({ ptr_a: [line(1, 'shop-1'), line(2, 'shop-2')] });
    store.leaveBuild({ id: 'stale_2', partnerId: 'ptr_a', clientId: 'shop-2', currency: currencyCode('EUR') }, [line(2, 'shop-2')], 'building');

    const created = await runSettlement(deps, { partnerId: 'ptr_a', clientId: 'shop-1' });

    expect(created.map((batch) => [batch.clientId, batch.transactionIds])).toEqual([['shop-1', ['svc_tx_1']]]);
    expect(store.callsOf('discardBuild')).toEqual([]);
    expect(store.builds.get('stale_2')?.status).toBe('building');
  });
});

describe('a run`s answer', () => {
  it('stays under 4 MB when groups built side by side each make a large batch: it starts no batch its answer has no room for, and goes on by itself', async () => {
    // Arrange: 8 merchants, each 3,000 lines shown as adjustments (about 1.2 MB of answer each), built 8 at once
    const waiting = Array.from({ length: 8 }, (_, m) => Array.from({ length: 3_000 }, (_, i) => ({ ...line(m * 10_000 + i, `shop-${m}`), settlesTransaction: false }))).flat();
    const { deps, continued } = depsWith({ ptr_a: waiting });

    const run = await settle(deps, { partnerId: 'ptr_a' });

    // Assert: 3 batches (1.2 + 1.2 + 1.2 MB; a fourth would pass 4 MB), the rest continued
    expect(run.batches).toHaveLength(3);
    expect(run.batches.reduce((sum, batch) => sum + JSON.stringify(batch).length, 0)).toBeLessThan(6_000_000);
    expect(run.continuing).toBe(true);
    expect(continued).toHaveLength(1);
  });
});

describe('a build slower than the run expected', () => {
  it('stops reserving when the rest would not be built before the deadline: the build is left for its continuation, the group freed, the run goes on by itself', async () => {
    // Arrange: 2,500 lines (3 slices of 1,000) with 20 s left; the first slice takes 12 s (the clock moved on under it), so 8 s are left for 1,500 lines
    const { deps, store, continued } = depsWith({ ptr_a: sales(1, 2_500) }, {
      beforeReserve: (_batch, reserves) => {
        if (reserves === 1) jest.setSystemTime(Date.now() + 12_000);
      },
    });
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'queueMicrotask', 'hrtime', 'performance'] });
    try {
      // Act
      const run = await runWithDeadline(Date.now() + 20_000, () => settle(deps, { partnerId: 'ptr_a' }));

      // Assert: no batch, the build left building (the continuation discards it), the lease given back, a continuation sent
      expect(run).toEqual({ batches: [], continuing: true });
      expect([...store.builds.values()].map((build) => build.status)).toEqual(['building']);
      expect(store.leases.get('ptr_a/shop-1/EUR')).toBeUndefined();
      expect(continued).toHaveLength(1);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('a run that read only part of what waits', () => {
  it('makes every batch of a group it read whole, when the read stopped in a group after it (left out whole)', async () => {
    const { deps } = depsWith({ ptr_a: sales(1, 15_000, 'shop-1') }, { moreWaiting: true });

    const run = await settle(deps, { partnerId: 'ptr_a' });

    expect(run.batches.map((batch) => `${batch.clientId} ${batch.transactionIds.length}`)).toEqual(['shop-1 10000', 'shop-1 5000']);
    expect(run.continuing).toBe(true);
  });

  it('makes only the full batches of the one group it read part of', async () => {
    const { deps } = depsWith({ ptr_a: sales(1, 12_000, 'shop-2') }, { moreWaiting: true, partialGroup: 'shop-2' });

    const run = await settle(deps, { partnerId: 'ptr_a' });

    expect(run.batches.map((batch) => `${batch.clientId} ${batch.transactionIds.length}`)).toEqual(['shop-2 10000']);
    expect(run.continuing).toBe(true);
  });
});

describe('a run that cannot finish goes on by itself', () => {
  it('answers continuing when a continuation of its scope is already waiting to run, and a continuation frees its scope as it starts', async () => {
    const { deps, store } = depsWith({ ptr_a: [line(1)] }, { moreWaiting: true });
    const pending = { ...deps, continuations: { ...deps.continuations, continueRun: async () => 'pending' as const } };

    const run = await settle(pending, { partnerId: 'ptr_a' });
    await settle(deps, { partnerId: 'ptr_a' }, { cutoff: NOW.toISOString(), attempt: 1 });

    expect(run.continuing).toBe(true);
    expect(store.calls.filter((call) => call.startsWith('continuationStarted'))).toEqual(['continuationStarted {"partnerId":"ptr_a"}']);
  });

  it('sends a continuation with its scope and cutoff when more waits than it read, and answers what it made with continuing true', async () => {
    const { deps, continued } = depsWith({ ptr_a: [line(1), line(2)] }, { moreWaiting: true });

    const run = await settle(deps, { partnerId: 'ptr_a', clientId: 'shop-1' });

    expect(run.batches.map((batch) => batch.transactionIds)).toEqual([['svc_tx_1', 'svc_tx_2']]);
    expect(run.continuing).toBe(true);
    expect(continued).toEqual([{ scope: { partnerId: 'ptr_a', clientId: 'shop-1' }, cutoff: NOW.toISOString(), attempt: 1 }]);
  });

  it('runs a continuation with the cutoff of the run it continues, and sends the next with the next rank', async () => {
    const { deps, store, continued } = depsWith({ ptr_a: [line(1)] }, { moreWaiting: true });
    const cutoff = '2026-11-20T00:00:00.000Z';

    const run = await settle(deps, { partnerId: 'ptr_a' }, { cutoff, attempt: 3 });

    expect(store.cutoffs).toEqual([cutoff]);
    expect(run.continuing).toBe(true);
    expect(continued).toEqual([{ scope: { partnerId: 'ptr_a' }, cutoff, attempt: 4 }]);
  });

  it('sends none after a continuation that made nothing (no loop), nor when the run finished', async () => {
    const stuck = depsWith({ ptr_a: [] }, { moreWaiting: true });
    const done = depsWith({ ptr_a: [line(1)] });

    const stuckRun = await settle(stuck.deps, { partnerId: 'ptr_a' }, { cutoff: NOW.toISOString(), attempt: 1 });
    const doneRun = await settle(done.deps, { partnerId: 'ptr_a' });

    expect([stuckRun.continuing, stuck.continued]).toEqual([false, []]);
    expect([doneRun.batches.length, doneRun.continuing, done.continued]).toEqual([1, false, []]);
  });

  it('answers what it made, continuing false, when the continuation cannot be sent: the rest waits for the next run', async () => {
    const { deps } = depsWith({ ptr_a: [line(1)] }, { moreWaiting: true, continuationFails: true });

    const run = await settle(deps, { partnerId: 'ptr_a' });

    expect(run.batches).toHaveLength(1);
    expect(run.continuing).toBe(false);
  });
});
