/**
 * A large settlement run killed outright (kill -9 of the whole `npm start` tree: npm, the service's node, DynamoDB
 * Local's Java) at random moments, then started again on the same data (docs/settlement.md "What a killed run
 * leaves"): no transaction is ever in two batches, no half-built batch is ever visible, every visible batch's totals
 * are the exact sums of its transactions, what waits plus what is batched is always exactly what was paid in, and a
 * later run settles the rest.
 *
 * Driven from outside as a user does: the real `npm start` with its data on disk (`LOCAL_DATA_DIR`, kept across the
 * restarts), checked over HTTP. The payments alone are written straight to the service's DynamoDB Local (thousands
 * through the API would take minutes), in the shape the service writes on success. The kill moments come from a
 * seeded generator (`SETTLEMENT_CRASH_SEED`); what each kill left (batches committed, builds left building or half
 * discarded, lines reserved) is read from the table and printed, so a run says where its kills landed.
 *
 * The sizes follow the machine: what one run settles in a second varies several-fold with what else runs on it, so
 * a first run (not killed) measures it, the backlog is a run of several seconds at that rate (a few thousand
 * payments here), and each kill lands at a random fraction of the time its run should take, which makes the phases
 * the kills land in (clean-up of old builds, reading, reserving, committing, after the answer) much the same on a
 * quiet machine and a busy one. The run after a kill in the middle of a build spends seconds moving its lines back
 * (one conditional write each, 50-150 a second on DynamoDB Local here). With 21 starts of `npm start` at 5-10 s each,
 * the test takes 4-6 minutes; a continuation (a run still going ~24 s into its request) is out of its reach.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureConsoleBuilt } from '../../infra/shared/console-build';
import type { Transaction } from '../../lib/domain/transaction';
import { keys } from '../../lib/store/keys';
import { descendants, serviceClient, startService, waitFor, type RunningService } from '../support/npm-start';
import { seededRandom } from '../support/seeded-random';
import { seedFrom } from '../support/seeds';
import { seedWaitingTransactions, yesterday } from '../support/settlement';

const SEED = seedFrom('SETTLEMENT_CRASH_SEED', 28_112_026);
/**
 * How much work the runs get, in seconds of this machine's settling now (it varies several-fold with what else runs):
 * a first run, not killed, over {@link CALIBRATION} payments of a fourth merchant measures how many lines a second a
 * group builds (then each run that answers, by its largest batch); the backlog's largest group is about that many
 * seconds of it, and the payments arriving for one merchant before each run that many more.
 */
const CALIBRATION = 400;
const BACKLOG_SECONDS = 5;
const ARRIVAL_SECONDS = 1.2;
/**
 * The backlog's merchants, by share: groups of very different sizes finish building at different moments (one run
 * builds them all at once), the small ones soon after the run starts, so kills land between commits too.
 */
const SHARES = [0.6, 0.3, 0.1];
const KILLS = 20;
/** `SETTLEMENT_GROUP_LEASE_SECONDS`: a killed run's groups are free again this long after its last renewal. */
const LEASE_SECONDS = 2;
/**
 * Each kill lands at a random fraction of the time the run should take (its largest group's waiting lines at the rate
 * measured, after each line a kill left reserved counted {@link DISCARD_COST} times: the next run first moves it back,
 * one write at a time): most within the run, from its clean-up of old builds, its reading, its reserving, to its
 * commits; {@link LATE_KILLS} of them up to half as long again after it, once it has answered.
 */
const LATE_KILLS = 0.2;
const DISCARD_COST = 3;
/** A run expected to take longer is killed within this (the whole test stays within minutes). */
const MAX_EXPECTED_MS = 12_000;
/** 4-5 minutes here, more while other test runs share the machine: the bound is for a start or a run that hangs. */
const TEST_TIMEOUT_MS = 600_000;

type Api = ReturnType<typeof serviceClient>;
interface Partner {
  partnerId: string;
  apiKey: string;
  hmacSecret: string;
}
interface BatchView {
  id: string;
  clientId: string;
  currency: string;
  status: string;
  transactionIds: string[];
  adjustments: unknown[];
  totalGross: number;
  totalProcessorFees: number;
  totalPlatformFees: number;
  totalNet: number;
}
interface Totals {
  gross: number;
  processorFees: number;
  platformFees: number;
  net: number;
}

const serviceEnv = (dataDir: string) => ({
  LOCAL_DATA_DIR: dataDir,
  SETTLEMENT_GROUP_LEASE_SECONDS: String(LEASE_SECONDS),
  SETTLEMENT_CUTOFF: 'now',
  SETTLEMENT_SCHEDULE: undefined,
  RECONCILIATION_SCHEDULE: 'off',
});

/** Major units (EUR) to minor, exactly. */
const minor = (major: number) => Math.round(major * 100);

const totalsOf = (transactions: readonly Transaction[]): Totals =>
  transactions.reduce<Totals>(
    (sum, tx) => ({
      gross: sum.gross + tx.amountMinor,
      processorFees: sum.processorFees + (tx.fees?.processorFeeMinor ?? Number.NaN),
      platformFees: sum.platformFees + (tx.fees?.platformFeeMinor ?? Number.NaN),
      net: sum.net + (tx.fees?.netAmountMinor ?? Number.NaN),
    }),
    { gross: 0, processorFees: 0, platformFees: 0, net: 0 },
  );

const batchTotals = (batch: BatchView): Totals => ({
  gross: minor(batch.totalGross),
  processorFees: minor(batch.totalProcessorFees),
  platformFees: minor(batch.totalPlatformFees),
  net: minor(batch.totalNet),
});

/** The values that occur more than once. */
function duplicates(values: readonly string[]): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const value of values) {
    if (seen.has(value)) twice.add(value);
    seen.add(value);
  }
  return [...twice];
}

/** The service's DynamoDB Local and table, as its banner names them. */
function tableOf(service: RunningService) {
  const match = /DynamoDB Local\s+(\S+)\s+table "([^"]+)"/.exec(service.output());
  if (match === null) throw new Error(`npm start printed no DynamoDB Local endpoint:\n${service.output()}`);
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: match[1], region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
  return { client, tableName: match[2] as string };
}

type Table = ReturnType<typeof tableOf>;

async function queryEvery(table: Table, input: Omit<ConstructorParameters<typeof QueryCommand>[0], 'TableName'>) {
  const items: Record<string, unknown>[] = [];
  let count = 0;
  let key: Record<string, unknown> | undefined;
  do {
    const page = await table.client.send(new QueryCommand({ ...input, TableName: table.tableName, ExclusiveStartKey: key }));
    items.push(...(page.Items ?? []));
    count += page.Count ?? 0;
    key = page.LastEvaluatedKey;
  } while (key !== undefined);
  return { items, count };
}

interface LeftBuild {
  id: string;
  status: string;
  lines: number;
  /** A few of the transactions whose sales it holds reserved. */
  someTransactions: string[];
}

/** What a kill left, read from the table: the partner's builds (building, or discarded and not yet forgotten) and the lines each holds. */
async function buildsLeft(table: Table, partnerId: string): Promise<LeftBuild[]> {
  const { items } = await queryEvery(table, {
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.settlementBuildsOf(partnerId) },
  });
  const builds: LeftBuild[] = [];
  for (const build of items) {
    const lines = await queryEvery(table, {
      IndexName: 'gsi3',
      KeyConditionExpression: 'gsi3pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.settlementBuildPartition(build.id as string) },
      ProjectionExpression: 'svcTxId',
    });
    builds.push({ id: build.id as string, status: String(build.status), lines: lines.count, someTransactions: lines.items.slice(0, 5).map((line) => line.svcTxId as string) });
  }
  return builds;
}

const describeBuilds = (builds: readonly LeftBuild[]) =>
  builds.length === 0 ? 'no builds' : builds.map((build) => `${build.status}(${build.lines} lines)`).sort().join(' ');

/** Where a kill landed, from what the run did between the state before it and the state it left. */
function whereKilled(before: readonly LeftBuild[], after: readonly LeftBuild[], committed: number): string {
  const old = new Map(before.map((build) => [build.id, build]));
  const tidied = before.filter((build) => {
    const now = after.find((candidate) => candidate.id === build.id);
    return now === undefined || now.status !== build.status || now.lines !== build.lines;
  });
  const started = after.filter((build) => !old.has(build.id));
  const did = [
    ...(tidied.length > 0 ? [`tidied ${tidied.length} of ${before.length} old builds`] : []),
    ...(started.length > 0 ? [`started ${started.length} builds (${started.reduce((sum, build) => sum + build.lines, 0)} lines reserved)`] : []),
    ...(committed > 0 ? [`committed ${committed}`] : []),
  ];
  return did.length === 0 ? 'before any write (reading)' : did.join(', ');
}

async function allPages<T>(api: Api, partner: Partner, path: string): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const page = await api.read(partner, cursor === null ? path : `${path}${separator}cursor=${encodeURIComponent(cursor)}`);
    if (page.status !== 200) throw new Error(`GET ${path} answered ${page.status}: ${JSON.stringify(page.body)}`);
    items.push(...(page.body.items as T[]));
    cursor = page.body.next_cursor as string | null;
  } while (cursor !== null);
  return items;
}

/**
 * The invariants, from outside over HTTP: `GET /settlements` (every page) lists no batch twice and no transaction in
 * two batches, only seeded ones; every listed batch is whole (pending, its totals the exact sums of its
 * transactions, all of its client); what `GET /balances` says waits, plus what the batches hold, is exactly what
 * was seeded, per client (no line lost, none counted twice, whatever builds a kill left); and a sample of
 * transactions read one by one says `queued` if listed, `unsettled` if not. A build a kill left is not found by its id,
 * and the transactions it holds reserved read `unsettled`. Returns the violations, and the batches.
 */
async function violations(
  api: Api,
  partner: Partner,
  seeded: ReadonlyMap<string, Transaction>,
  clients: readonly string[],
  builds: readonly LeftBuild[],
  pick: () => number,
) {
  const found: string[] = [];
  const batches = await allPages<BatchView>(api, partner, '/settlements?limit=200');
  const batchIds = batches.map((batch) => batch.id);
  if (duplicates(batchIds).length > 0) found.push(`batches listed twice: ${duplicates(batchIds).join(', ')}`);
  const listed = batches.flatMap((batch) => batch.transactionIds);
  const twice = duplicates(listed);
  if (twice.length > 0) found.push(`${twice.length} transactions in two batches, e.g. ${twice.slice(0, 5).join(', ')}`);
  const unknown = listed.filter((id) => !seeded.has(id));
  if (unknown.length > 0) found.push(`${unknown.length} listed transactions never seeded, e.g. ${unknown.slice(0, 5).join(', ')}`);
  for (const batch of batches) {
    const transactions = batch.transactionIds.map((id) => seeded.get(id)).filter((tx): tx is Transaction => tx !== undefined);
    const expected = totalsOf(transactions);
    if (JSON.stringify(batchTotals(batch)) !== JSON.stringify(expected)) {
      found.push(`batch ${batch.id} (${batch.transactionIds.length} transactions): totals ${JSON.stringify(batchTotals(batch))}, its transactions sum to ${JSON.stringify(expected)}`);
    }
    if (batch.status !== 'pending' || batch.adjustments.length !== 0) found.push(`batch ${batch.id}: status ${batch.status}, ${batch.adjustments.length} adjustments`);
    if (transactions.some((tx) => tx.clientId !== batch.clientId)) found.push(`batch ${batch.id} of ${batch.clientId} lists another client's transactions`);
  }

  const balances = await allPages<{ client_id: string; currency: string; unsettled_net: number }>(api, partner, '/balances?limit=200');
  for (const clientId of clients) {
    const waiting = balances.filter((balance) => balance.client_id === clientId).reduce((sum, balance) => sum + minor(balance.unsettled_net), 0);
    const batched = batches.filter((batch) => batch.clientId === clientId).reduce((sum, batch) => sum + minor(batch.totalNet), 0);
    const paidIn = totalsOf([...seeded.values()].filter((tx) => tx.clientId === clientId)).net;
    if (waiting + batched !== paidIn) found.push(`client ${clientId}: waiting ${waiting} + batched ${batched} = ${waiting + batched}, seeded net ${paidIn}`);
  }

  const listedSet = new Set(listed);
  const all = [...seeded.keys()];
  const unlisted = all.filter((id) => !listedSet.has(id));
  const sample = [
    ...Array.from({ length: Math.min(10, listed.length) }, () => ({ id: listed[Math.floor(pick() * listed.length)] as string, want: 'queued' })),
    ...Array.from({ length: Math.min(10, unlisted.length) }, () => ({ id: unlisted[Math.floor(pick() * unlisted.length)] as string, want: 'unsettled' })),
  ];
  // What a kill left building is seen nowhere: not by its id, and its reserved transactions still read `unsettled`
  for (const build of builds) {
    const read = await api.read(partner, `/settlements/${build.id}`);
    if (read.status !== 404) found.push(`GET /settlements/${build.id} of a build left ${build.status}: ${read.status}`);
    sample.push(...build.someTransactions.map((id) => ({ id, want: 'unsettled' })));
  }
  // At once, as many clients would read them
  const reads = await Promise.all(sample.map(async ({ id, want }) => ({ id, want, read: await api.read(partner, `/transactions/${id}`) })));
  for (const { id, want, read } of reads) {
    if (read.status !== 200 || read.body.settlementStatus !== want) found.push(`GET /transactions/${id}: ${read.status} ${read.body?.settlementStatus}, expected ${want}`);
  }
  return { found, batches };
}

/** Whether a process is gone: no such process, or dead and waiting to be reaped (a zombie has run its last). */
function isGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** kill -9 of the whole `npm start` tree at once (npm, the service's node, DynamoDB Local's Java), then checks it is gone. */
async function killTree(service: RunningService): Promise<void> {
  const npmPid = service.npm.pid ?? -1;
  const tree = [...descendants(npmPid).map((child) => child.pid), npmPid];
  for (const pid of tree) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  service.killAll(); // anything the snapshot missed (it remembers every process it saw under npm)
  await service.exited;
  await waitFor(async () => (tree.every(isGone) ? true : undefined), 10_000, `the killed npm start tree (${tree.join(', ')}) to be gone`);
  await expect(fetch(`${service.baseUrl}/health`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
  await expect(fetch(`http://127.0.0.1:${service.dynamoPort}/`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
}

/** `POST /settlements/run` with the partner's key. */
async function run(service: RunningService, partner: Partner, signal?: AbortSignal) {
  const response = await fetch(`${service.baseUrl}/settlements/run`, { method: 'POST', headers: { 'x-api-key': partner.apiKey }, signal: signal ?? AbortSignal.timeout(60_000) });
  const body = (await response.json()) as { created_batches?: number; continuing?: boolean; code?: string };
  return { status: response.status, createdBatches: body.created_batches, continuing: body.continuing, ...(body.code === undefined ? {} : { code: body.code }) };
}

describe('settlement runs killed with kill -9 of npm start, then started again', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'settlement-crashes-'));
  const started: RunningService[] = [];
  const tables: Table[] = [];

  beforeAll(async () => {
    // The first `npm start` of a fresh checkout builds the console: done here, outside the start-up's 60 s bound.
    await ensureConsoleBuilt(() => undefined);
  }, 240_000);

  afterAll(() => {
    for (const table of tables) table.client.destroy();
    for (const service of started) service.killAll();
    // DynamoDB Local's data, and the pid file a kill -9 leaves beside it, go with the directory.
    rmSync(dataDir, { recursive: true, force: true });
  });

  /**
   * `npm start` on the data directory. Its ports are picked free just before, so another process may take one first
   * (an outgoing connection's ephemeral port): such a start is tried again on other ports. Any other failure to
   * start (the data a kill left unreadable, say) fails the test.
   */
  const start = async () => {
    let service: RunningService | undefined;
    for (let attempt = 1; service === undefined; attempt++) {
      try {
        service = await startService({ env: serviceEnv(dataDir) });
      } catch (error) {
        if (attempt >= 3 || !/EADDRINUSE|is already in use/.test(String(error))) throw error;
      }
    }
    started.push(service);
    const table = tableOf(service);
    tables.push(table);
    return { service, api: serviceClient(service), table };
  };

  it(`no transaction in two batches, no half-built batch seen, totals exact, and a later run settles the rest (${KILLS} kills)`, async () => {
    const phases: string[] = [];
    let phaseStarted = Date.now();
    /** Where the time went, for the summary. */
    const phase = (name: string) => {
      phases.push(`${name} ${Math.round((Date.now() - phaseStarted) / 1000)} s`);
      phaseStarted = Date.now();
    };
    const random = seededRandom(SEED);
    const pick = seededRandom(SEED + 1);

    // Arrange: a partner with four merchants; a first run (not killed) over the last one's payments measures how fast a
    // group builds now, and the other three get a backlog of succeeded payments sized by it
    let { service, api, table } = await start();
    const first = await api.createPartnerWithClient();
    const partner: Partner = { partnerId: first.partnerId, apiKey: first.apiKey, hmacSecret: first.hmacSecret };
    const clients = [first.clientId];
    while (clients.length < SHARES.length + 1) {
      const client = await api.signed(first, '/clients', { client_id: `merchant-${randomUUID().slice(0, 12)}`, legal_name: 'Merchant Ltd' });
      expect(client.status).toBe(201);
      clients.push(client.body.client_id as string);
    }
    const seeded = new Map<string, Transaction>();
    const seed = async (clientId: string, count: number, from?: string) => {
      for (const tx of await seedWaitingTransactions({ partnerId: partner.partnerId, clientId }, count, { target: table, ...(from === undefined ? {} : { from }) })) seeded.set(tx.svcTxId, tx);
    };
    const calibrating = clients.at(-1) as string;
    await seed(calibrating, CALIBRATION);
    const calibrationStarted = Date.now();
    expect(await run(service, partner)).toEqual({ status: 200, createdBatches: 1, continuing: false });
    let linesPerSecond = CALIBRATION / ((Date.now() - calibrationStarted) / 1_000);
    const calibrated = linesPerSecond;
    const backlog = Math.min(12_000, Math.max(600, Math.round((linesPerSecond * BACKLOG_SECONDS) / (SHARES[0] ?? 1))));
    const sizes = SHARES.map((share) => Math.round(share * backlog));
    const arrivals = Math.min(3_000, Math.max(40, Math.round(linesPerSecond * ARRIVAL_SECONDS)));
    for (const [n, size] of sizes.entries()) await seed(clients[n] as string, size);
    expect(seeded.size).toBe(CALIBRATION + sizes.reduce((sum, size) => sum + size, 0));
    const initial = await violations(api, partner, seeded, clients, [], pick);
    expect(initial.found).toEqual([]);
    phase('start, calibration and seeding');

    const summary = () =>
      `a first run settled ${CALIBRATION} payments at ${Math.round(calibrated)} a second (${Math.round(linesPerSecond)} at the end), so merchants of ${sizes.join(', ')} payments, and ${arrivals} more for one before each run`;

    // Act: KILLS times, a run sent, then the whole tree killed a random moment later, and the service started again
    const kills: string[] = [];
    const finalRuns: Array<Awaited<ReturnType<typeof run>>> = [];
    try {
      let batchesSeen = initial.batches;
      /** A merchant's seeded payments in no batch yet. */
      const waitingOf = (clientId: string, batches: readonly BatchView[]) =>
        [...seeded.values()].filter((tx) => tx.clientId === clientId).length -
        batches.filter((batch) => batch.clientId === clientId).reduce((sum, batch) => sum + batch.transactionIds.length, 0);
      let buildsBefore: LeftBuild[] = [];
      for (let kill = 1; kill <= KILLS; kill++) {
        const arrivingFor = clients[Math.floor(random() * clients.length)] as string;
        const fraction = random() < LATE_KILLS ? 1 + random() / 2 : random();
        await seed(arrivingFor, arrivals, new Date(Date.parse(yesterday()) + 2 * 3_600_000 + kill * 3_600_000 / KILLS).toISOString());
        // Its groups build side by side: the run takes about as long as its largest, after its clean-up.
        const reserved = buildsBefore.reduce((sum, build) => sum + build.lines, 0);
        const largest = Math.max(...clients.map((clientId) => waitingOf(clientId, batchesSeen)));
        const expectedMs = Math.min(MAX_EXPECTED_MS, Math.round(500 + (1_000 * (largest + DISCARD_COST * reserved)) / linesPerSecond));
        const delayMs = Math.round(fraction * expectedMs);
        const sentAt = Date.now();
        const answer = run(service, partner).then(
          (result) => ({ ...result, afterMs: Date.now() - sentAt }),
          () => undefined,
        );
        await sleep(delayMs);
        await killTree(service);
        const answered = await answer;

        const restarting = Date.now();
        ({ service, api, table } = await start());
        const restartMs = Date.now() - restarting;
        const left = await buildsLeft(table, partner.partnerId);
        const { found, batches } = await violations(api, partner, seeded, clients, left, pick);
        // A run that answered tells how fast a group builds now: its largest new batch's lines in the time it took.
        const made = batches.filter((batch) => !batchesSeen.some((seen) => seen.id === batch.id));
        const largestMade = Math.max(0, ...made.map((batch) => batch.transactionIds.length));
        if (answered?.status === 200 && largestMade >= 100) linesPerSecond = (linesPerSecond + largestMade / (answered.afterMs / 1_000)) / 2;
        kills.push(
          `kill ${String(kill).padStart(2)} at ${String(delayMs).padStart(5)} ms (${fraction.toFixed(2)} of ${expectedMs}): ${
            answered === undefined
              ? 'run cut off'
              : `run answered ${answered.status}${answered.code === undefined ? '' : ` ${answered.code}`} at ${answered.afterMs} ms (${answered.createdBatches} made${answered.continuing === true ? ', continuing' : ''})`
          }: ${whereKilled(buildsBefore, left, made.length)}; now ${batches.length} batches, ${describeBuilds(left)}; restart ${restartMs} ms`,
        );
        buildsBefore = left;
        batchesSeen = batches;
        expect({ seed: SEED, kill, delayMs, violations: found }).toEqual({ seed: SEED, kill, delayMs, violations: [] });
      }
      phase('kills');

      // Act: started once more, a lease later, runs until one makes nothing and continues nothing. A run whose work
      // outlasts its request (its time is checked between batches only: not while it cleans up old builds, nor
      // within a build) answers 503 REQUEST_TIMED_OUT while that work goes on in the service: it is sent again once
      // the service is quiet, as its Retry-After says, and the summary shows it.
      await sleep(LEASE_SECONDS * 1_000 + 500);
      /** Until no run or continuation is working: the batches, and the builds with their lines, the same over 5 s, none building. */
      const quiet = async () => {
        const seen: string[] = [];
        await waitFor(
          async () => {
            const builds = await buildsLeft(table, partner.partnerId);
            seen.push(`${(await allPages<BatchView>(api, partner, '/settlements?limit=200')).length} ${describeBuilds(builds)}`);
            if (seen.length >= 3 && new Set(seen.slice(-3)).size === 1 && builds.every((build) => build.status !== 'building')) return true;
            await sleep(2_250);
            return undefined;
          },
          180_000,
          'the settlement runs in the service to finish',
        );
      };
      for (let round = 0; round < 12; round++) {
        const result = await run(service, partner);
        finalRuns.push(result);
        if (result.status === 503 && result.code === 'REQUEST_TIMED_OUT') {
          await quiet();
          continue;
        }
        expect(result.status).toBe(200);
        if (result.continuing === true) await quiet();
        else if (result.createdBatches === 0) {
          await quiet();
          const again = await run(service, partner);
          finalRuns.push(again);
          if (again.status === 200 && again.createdBatches === 0 && again.continuing === false) break;
        }
      }
      phase('final runs');
    } finally {
      console.log(
        [
          `SETTLEMENT_CRASH_SEED=${SEED}: ${kills.length} of ${KILLS} kills (at a fraction of the time the run should take); ${summary()}`,
          ...kills.map((row) => `  ${row}`),
          `  final runs: ${finalRuns.map((result) => (result.status === 200 ? `${result.createdBatches} made${result.continuing === true ? ' continuing' : ''}` : `${result.status} ${result.code ?? ''}`)).join(', ')}`,
          `  ${phases.join(', ')}`,
          ...started.flatMap((one) => one.output().split('\n').filter((line) => /"level":"ERROR"|^\[|Error/.test(line))).slice(-5).map((line) => `  npm start said: ${line.slice(0, 1_500)}`),
        ].join('\n'),
      );
    }

    // Assert: the last run made nothing and continues nothing; every seeded payment is in exactly one batch, every
    // batch's totals are the exact sums of its payments, nothing waits, and every payment reads `queued`
    expect(finalRuns.at(-1)).toEqual({ status: 200, createdBatches: 0, continuing: false });
    const left = await buildsLeft(table, partner.partnerId);
    const { found, batches } = await violations(api, partner, seeded, clients, left, pick);
    expect(found).toEqual([]);
    expect(batches.flatMap((batch) => batch.transactionIds).sort()).toEqual([...seeded.keys()].sort());
    for (const clientId of clients) {
      const ofClient = batches.filter((batch) => batch.clientId === clientId);
      const sum = ofClient.reduce<Totals>((total, batch) => {
        const totals = batchTotals(batch);
        return { gross: total.gross + totals.gross, processorFees: total.processorFees + totals.processorFees, platformFees: total.platformFees + totals.platformFees, net: total.net + totals.net };
      }, { gross: 0, processorFees: 0, platformFees: 0, net: 0 });
      expect({ clientId, ...sum }).toEqual({ clientId, ...totalsOf([...seeded.values()].filter((tx) => tx.clientId === clientId)) });
    }
    expect(await allPages(api, partner, '/balances?limit=200')).toEqual([]);
    const transactions = await allPages<{ svcTxId: string; settlementStatus: string }>(api, partner, '/transactions?limit=200');
    expect(transactions.filter((tx) => seeded.has(tx.svcTxId) && tx.settlementStatus !== 'queued').map((tx) => `${tx.svcTxId}: ${tx.settlementStatus}`)).toEqual([]);
    expect(transactions.filter((tx) => seeded.has(tx.svcTxId))).toHaveLength(seeded.size);
    expect(left.filter((build) => build.status !== 'discarded' || build.lines > 0)).toEqual([]);
  }, TEST_TIMEOUT_MS);
});
