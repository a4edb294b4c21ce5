/**
 * Section 5 of `npm run bench` (`npm run bench -- settlement` runs it alone): settlement run performance,
 * the settlement run's two figures, measured against `npm start -- --in-memory` itself (default `SETTLEMENT_CUTOFF`).
 *
 *   a. 10,000 eligible transactions (succeeded, unsettled, created yesterday, a real fee split) over 10 partners
 *      x 2 clients x 2-3 currencies: POST /api/v1/settlements/run with a platform key (every partner), timed from
 *      request until every payment is batched: a call that stops before it is done (~3 s before its 29 s deadline, or
 *      with part of a partner's backlog unread) goes on by itself (`continuing`), and `GET /settlements` is followed
 *      until the continuations have batched the rest. Target: everything batched within 30 s.
 *   b. the same in a fresh service whose table also holds 100,000 older settled transactions of the same
 *      partners (paid, out of the settlement index). Target: at most 1.2x as long as (a).
 *
 * Seeding is not measured: items are written straight to DynamoDB Local (BatchWriteItem, 25 a call, several in
 * flight) in the exact shape the service writes (`transactionItem`, plus the fee split and the gsi3 keys a move
 * to succeeded sets). Before each run the service's process group is left to go idle (its stream relay reads
 * every seeded item's stream record), so the run does not share the machine with that catch-up.
 *
 *   c. one merchant's 100,000 waiting payments in one currency (`BENCH_SETTLEMENT_ONE_GROUP`): one call, the rest
 *      by continuations, 10 batches of 10,000. Target: 240 s.
 *
 * Every run is checked: every seeded id batched exactly once, the batches' gross equal to the seeded gross per
 * currency (exact, minor units), nothing left in the settlement index. A failed check fails the bench.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { type Config, loadConfig } from '../lib/config';
import { computeFees, type FeeSettings } from '../lib/domain/fees';
import { newId } from '../lib/domain/ids';
import { type CurrencyCode, currencyCode, toMinorUnits } from '../lib/domain/money';
import { type LedgerEntry, NO_REVERSALS, reversalEntries } from '../lib/domain/ledger';
import { MAX_LINES_PER_BATCH } from '../lib/domain/settlement';
import type { Transaction } from '../lib/domain/transaction';
import { keys } from '../lib/store/keys';
import { entryItem } from '../lib/store/ledger-entries';
import { transactionItem } from '../lib/store/transactions';
import { type ServiceProcess, type CpuSnapshot, cpuSnapshot, round, sleep, waitUntilIdle } from '../infra/local/runtime/service-process';
import { seededRandom } from '../test/support/seeded-random';

const ELIGIBLE = Number(process.env.BENCH_SETTLEMENT_ELIGIBLE ?? 10_000);
/** One waiting payment in this many carries a partial refund entry: settlement sums ledger entries, not only sales. */
const REFUNDED_EVERY = 10;
const HISTORY = Number(process.env.BENCH_SETTLEMENT_HISTORY ?? 100_000);
const PARTNERS = 10;
/** Each partner's two clients: the first takes payments in three currencies, the second in two. */
const CLIENT_CURRENCIES = [['USD', 'EUR', 'JPY'], ['USD', 'EUR']] as const;
/** BatchWriteItem calls in flight while seeding. */
const SEED_CONCURRENCY = 8;
/** A run that needs more calls than this is reported as a failure, not waited out. */
const MAX_RUN_CALLS = 10;
/** The service is waited for at most this long to go idle after seeding. */
const IDLE_WAIT_MS = 180_000;

/**
 * What main.ts lends this section: its way of starting and stopping `npm start`, an admin token, and where the
 * tables go (stdout, or stderr when `--json` keeps stdout for the JSON line). Progress goes to stderr.
 */
export interface SettlementBenchHooks {
  startService(): Promise<ServiceProcess>;
  stopService(service: ServiceProcess): Promise<number>;
  adminToken(): Promise<string>;
  out: Console;
}

const progress = (line: string) => process.stderr.write(`${line}\n`);

interface Payee {
  partnerId: string;
  partnerName: string;
  clientId: string;
  clientName: string;
  currencies: readonly string[];
  fees: FeeSettings;
}

interface Seeded {
  items: number;
  ms: number;
  eligibleIds: Set<string>;
  /** Partial refund entries waiting beside their payments. */
  refunds: number;
  grossByCurrency: Map<string, number>;
  expectedBatches: number;
  /** Groups (partner, client, currency) with something waiting: one batch each below 10,000 entries. */
  groups: number;
}

interface RunBatch {
  currency: string;
  transactionIds: string[];
  totalGross: number;
}

export interface ScenarioResult {
  label: string;
  history: number;
  seeded: Seeded;
  idleWaitMs: number;
  /** Each call's time from request to answer, and the batches it created (the last one created none). */
  calls: Array<{ ms: number; batches: number }>;
  /** From the first request to the answer of the last call that created batches: everything batched. */
  untilBatchedMs: number;
  /** The batches made, by the calls and their continuations. */
  batches: number;
  /** CPU seconds while batching: the service's node processes, and DynamoDB Local's JVM (a process group of its own). */
  cpuSeconds: Record<string, number>;
}



/** Partners, their clients (each with its own fee settings) and a platform key, through the admin and partner APIs. */
async function setUpPayees(service: ServiceProcess, token: string, config: Config): Promise<{ payees: Payee[]; platformKey: string; partnerKeys: Map<string, string> }> {
  const post = async (path: string, body: unknown, headers: Record<string, string>) => {
    const response = await fetch(`${service.baseUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const json = (await response.json()) as Record<string, unknown>;
    if (response.status !== 201) throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(json)}`);
    return json;
  };
  const admin = (path: string, body: unknown) => post(path, body, { authorization: `Bearer ${token}` });
  const payees: Payee[] = [];
  const partnerKeys = new Map<string, string>();
  for (let p = 0; p < PARTNERS; p++) {
    const serviceFee = 1 + p * 0.25;
    const partner = await admin('/admin/partners', { name: `Settle Bench ${p}`, service_fee_percentage: serviceFee, kyc_status: 'approved', rate_limit_per_minute: 1_000_000 });
    const key = await admin(`/admin/partners/${String(partner.partner_id)}/api-keys`, { scope: 'partner' });
    partnerKeys.set(String(partner.partner_id), String(key.api_key));
    for (const [c, currencies] of CLIENT_CURRENCIES.entries()) {
      // The first client pays the partner's fee; the second its own, with a flat fee on USD payments.
      const body = { client_id: `settle-bench-${p}-${c}`, legal_name: `Settle Merchant ${p}-${c} Ltd`, ...(c === 1 ? { partner_fee_percentage: 3.5, partner_fee_flat_usd: 0.3 } : {}) };
      const raw = JSON.stringify(body);
      const client = await post('/clients', body, {
        'content-type': 'application/json',
        'x-api-key': String(key.api_key),
        'x-svc-hmac': createHmac('sha256', String(key.hmac_secret)).update(raw).digest('hex'),
        'idempotency-key': randomUUID(),
      });
      const flatUsdCents = client.partner_fee_flat_usd === null ? null : (toMinorUnits(Number(client.partner_fee_flat_usd), currencyCode('USD')) ?? null);
      payees.push({
        partnerId: String(partner.partner_id),
        partnerName: String(partner.name),
        clientId: String(client.client_id),
        clientName: String(client.legal_name),
        currencies,
        fees: {
          processorFeePercent: config.PROCESSOR_FEE_PERCENT,
          serviceFeePercent: Number(partner.service_fee_percentage),
          clientFeePercent: client.partner_fee_percentage === null ? null : Number(client.partner_fee_percentage),
          flatUsdCents,
        },
      });
    }
  }
  const platform = await admin('/admin/api-keys', { scope: 'platform' });
  return { payees, platformKey: String(platform.api_key), partnerKeys };
}

/**
 * The transactions to seed, one at a time: first `history` paid ones (2 to 60 days old, out of the settlement
 * index), then the `ELIGIBLE` waiting ones (created yesterday, in the index), round-robin over payees and
 * currencies; the waiting ones get the same amounts and times whatever the history. Each is the item
 * `createTransaction` writes, as the move to succeeded (and a settlement) left it.
 */
function* transactionsToSeed(
  payees: Payee[],
  history: number,
  dayStart: number,
  shape: SeedShape,
): Generator<{ item: Record<string, unknown>; eligible: boolean; tx: Transaction; refund?: LedgerEntry }> {
  const randoms = { history: seededRandom(7), eligible: seededRandom(9) };
  const slots = payees.flatMap((payee) => payee.currencies.map((currency) => ({ payee, currency: currencyCode(currency) })));
  let historyBatchId = randomUUID();
  for (let i = 0; i < history + shape.eligible; i++) {
    const eligible = i >= history;
    const next = eligible ? randoms.eligible : randoms.history;
    const { payee, currency } = slots[(eligible ? i - history : i) % slots.length] as { payee: Payee; currency: CurrencyCode };
    const amountMinor = currency === 'JPY' ? 100 + Math.floor(next() * 300_000) : 100 + Math.floor(next() * 200_000);
    const created = eligible ? dayStart - 1 - Math.floor(next() * 86_000_000) : dayStart - 2 * 86_400_000 - Math.floor(next() * 58 * 86_400_000);
    const createdAt = new Date(created).toISOString();
    const tx: Transaction = {
      id: newId.transactionRecord(),
      svcTxId: newId.svcTx(),
      partnerId: payee.partnerId,
      partnerName: payee.partnerName,
      clientId: payee.clientId,
      clientName: payee.clientName,
      partnerReference: `settle-bench-${i}`,
      processorPaymentIntentId: `pi_settlebench${randomUUID().replaceAll('-', '').slice(0, 20)}`,
      amountMinor,
      currency,
      status: 'succeeded',
      settlementStatus: eligible ? 'unsettled' : 'paid',
      fees: computeFees(amountMinor, currency, payee.fees),
      reversals: NO_REVERSALS,
      revision: 0,
      receiptEmail: 'buyer@example.com',
      statementDescriptorSuffix: null,
      meta: null,
      createdAt,
      // Eligible: when the processor's success applied; history: when its batch was paid.
      updatedAt: new Date(created + (eligible ? 1_000 : 86_400_000)).toISOString(),
    };
    // History batches of 99, as batches were made before decisions.md §7's 10,000.
    if (!eligible && i % 99 === 0) historyBatchId = randomUUID();
    const item = eligible
      ? { ...transactionItem(tx), ...keys.settlementIndex(tx.partnerId, tx.clientId, tx.currency, tx.createdAt, tx.svcTxId) }
      : // A placeholder batch id: no batch items are written for the history.
        { ...transactionItem(tx), batchId: historyBatchId };
    yield { item, eligible, tx };
    // One waiting payment in REFUNDED_EVERY was partly refunded: its refund entry waits beside it (the ledger's own
    // entry, as the processor event writes it), and the batch that takes the payment takes the entry.
    if (eligible && shape.refundedEvery > 0 && (i - history) % shape.refundedEvery === 0) {
      const refunded = Math.max(1, Math.floor(amountMinor * 0.3));
      const facts = { refundedMinor: refunded, refundSteps: [{ toMinor: refunded, refundIds: [`re_bench${i}`] }], disputes: [] };
      const [refund] = reversalEntries(tx, tx.fees, facts, tx.updatedAt);
      if (refund !== undefined) yield { item: entryItem(refund), eligible, tx, refund };
    }
  }
}

const documentClientFor = (config: Config) =>
  DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: config.AWS_REGION, endpoint: config.DYNAMODB_ENDPOINT, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
    { marshallOptions: { removeUndefinedValues: true } },
  );

/** How many waiting payments to seed, and one in how many carries a partial refund entry (0: none). */
interface SeedShape {
  eligible: number;
  refundedEvery: number;
}

const TEN_K: SeedShape = { eligible: ELIGIBLE, refundedEvery: REFUNDED_EVERY };

async function seed(db: DynamoDBDocumentClient, table: string, payees: Payee[], history: number, shape: SeedShape = TEN_K): Promise<Seeded> {
  const started = performance.now();
  const dayStart = new Date().setUTCHours(0, 0, 0, 0);
  const source = transactionsToSeed(payees, history, dayStart, shape);
  const seeded: Seeded = { items: 0, ms: 0, eligibleIds: new Set(), refunds: 0, grossByCurrency: new Map(), expectedBatches: 0, groups: 0 };
  const groups = new Map<string, number>();
  const total = history + shape.eligible;
  let reported = 0;
  const worker = async () => {
    for (;;) {
      const chunk: Array<Record<string, unknown>> = [];
      while (chunk.length < 25) {
        const next = source.next();
        if (next.done === true) break;
        const { item, eligible, tx, refund } = next.value;
        chunk.push(item);
        if (eligible) {
          if (refund === undefined) seeded.eligibleIds.add(tx.svcTxId);
          else seeded.refunds++;
          const gross = refund?.grossMinor ?? tx.amountMinor;
          seeded.grossByCurrency.set(tx.currency, (seeded.grossByCurrency.get(tx.currency) ?? 0) + gross);
          const group = `${tx.partnerId}#${tx.clientId}#${tx.currency}`;
          groups.set(group, (groups.get(group) ?? 0) + 1);
        }
      }
      if (chunk.length === 0) return;
      let requests: Array<Record<string, unknown>> = chunk.map((Item) => ({ PutRequest: { Item } }));
      for (let attempt = 0; requests.length > 0; attempt++) {
        if (attempt > 0) await sleep(Math.min(1_000, 20 * 2 ** attempt));
        if (attempt > 12) throw new Error('seeding: BatchWriteItem kept leaving items unprocessed');
        const { UnprocessedItems } = await db.send(new BatchWriteCommand({ RequestItems: { [table]: requests as never } }));
        requests = (UnprocessedItems?.[table] ?? []) as Array<Record<string, unknown>>;
      }
      seeded.items += chunk.length;
      if (seeded.items - reported >= 20_000 || seeded.items === total) {
        reported = seeded.items;
        progress(`  seeded ${seeded.items.toLocaleString('en')} / ${total.toLocaleString('en')} transactions (${round((performance.now() - started) / 1000)} s)`);
      }
    }
  };
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker));
  seeded.ms = performance.now() - started;
  seeded.groups = groups.size;
  seeded.expectedBatches = [...groups.values()].reduce((sum, count) => sum + Math.ceil(count / MAX_LINES_PER_BATCH), 0);
  return seeded;
}

/** CPU seconds of the service's node processes and of DynamoDB Local's JVM between two snapshots. */
const cpuBetween = (before: CpuSnapshot, after: CpuSnapshot) => ({ service: round(after.service - before.service), dynamodb: round(after.dynamodb - before.dynamodb) });

/**
 * POST /settlements/run (every partner) until a call creates no batch and does not go on by itself; a call that goes
 * on in the background (`continuing`) is followed by `GET /settlements` until every seeded payment is batched.
 */
async function runUntilSettled(service: ServiceProcess, platformKey: string, expected: number) {
  const calls: ScenarioResult['calls'] = [];
  let batches: RunBatch[] = [];
  const cpuBefore = cpuSnapshot(service);
  let cpuAfter = cpuBefore;
  const started = performance.now();
  let untilBatchedMs = 0;
  for (;;) {
    if (calls.length >= MAX_RUN_CALLS) throw new Error(`settlement run: still creating batches after ${MAX_RUN_CALLS} calls`);
    const callStarted = performance.now();
    const response = await fetch(`${service.baseUrl}/settlements/run`, { method: 'POST', headers: { 'x-api-key': platformKey } });
    const body = (await response.json()) as { created_batches: number; batches: RunBatch[]; continuing: boolean };
    const ended = performance.now();
    if (response.status !== 200) throw new Error(`POST /settlements/run answered ${response.status}: ${JSON.stringify(body)}`);
    calls.push({ ms: ended - callStarted, batches: body.created_batches });
    progress(`  call ${calls.length}: ${body.created_batches} batches in ${Math.round(ended - callStarted)} ms${body.continuing ? ', continuing in the background' : ''}`);
    if (body.continuing) {
      batches = await untilListed(service, platformKey, expected, started);
      untilBatchedMs = performance.now() - started;
      cpuAfter = cpuSnapshot(service);
      break;
    }
    if (body.created_batches === 0) break;
    batches.push(...body.batches);
    untilBatchedMs = ended - started;
    cpuAfter = cpuSnapshot(service);
  }
  return { calls, batches, untilBatchedMs, cpuSeconds: cpuBetween(cpuBefore, cpuAfter) };
}

/** `GET /settlements` every second until its batches hold `expected` payments (the continuations' work); those batches. */
async function untilListed(service: ServiceProcess, apiKey: string, expected: number, started: number): Promise<RunBatch[]> {
  let settled = -1;
  for (;;) {
    if (performance.now() - started > ONE_GROUP_WAIT_MS) throw new Error(`settlement: ${settled} of ${expected} payments batched after ${ONE_GROUP_WAIT_MS / 1000} s`);
    const batches = await listedBatches(service, apiKey);
    const now = batches.reduce((sum, batch) => sum + batch.transactionIds.length, 0);
    if (now !== settled) progress(`  ${batches.length} batches, ${now.toLocaleString('en')} payments (${round((performance.now() - started) / 1000)} s)`);
    settled = now;
    if (settled >= expected) return batches;
    await sleep(1_000);
  }
}

/** Every seeded id batched once, gross exact per currency, and nothing left waiting in the index. */
async function verify(db: DynamoDBDocumentClient, table: string, payees: Payee[], seeded: Seeded, batches: RunBatch[]) {
  const ids = batches.flatMap((batch) => batch.transactionIds);
  const distinct = new Set(ids);
  const strangers = ids.filter((id) => !seeded.eligibleIds.has(id));
  if (ids.length !== seeded.eligibleIds.size || distinct.size !== ids.length || strangers.length > 0) {
    throw new Error(`settlement run: ${ids.length} lines, ${distinct.size} distinct, ${strangers.length} not seeded; expected ${seeded.eligibleIds.size} seeded ids once each`);
  }
  const gross = new Map<string, number>();
  for (const batch of batches) {
    const minor = toMinorUnits(batch.totalGross, currencyCode(batch.currency));
    if (minor === undefined) throw new Error(`settlement run: totalGross ${batch.totalGross} ${batch.currency} is not a whole number of minor units`);
    gross.set(batch.currency, (gross.get(batch.currency) ?? 0) + minor);
  }
  for (const [currency, expected] of seeded.grossByCurrency) {
    if (gross.get(currency) !== expected) throw new Error(`settlement run: ${currency} gross ${gross.get(currency)} minor units, seeded ${expected}`);
  }
  for (const partnerId of new Set(payees.map((payee) => payee.partnerId))) {
    for (const partition of keys.settlementPartitions(partnerId)) {
      const { Count } = await db.send(new QueryCommand({ TableName: table, IndexName: 'gsi3', KeyConditionExpression: 'gsi3pk = :pk', ExpressionAttributeValues: { ':pk': partition }, Select: 'COUNT' }));
      if (Count !== 0) throw new Error(`settlement run: ${Count} items of ${partnerId} still wait in the settlement index (${partition})`);
    }
  }
}

async function measure(hooks: SettlementBenchHooks, label: string, history: number): Promise<ScenarioResult> {
  progress(`\nSettlement (${label}): starting a fresh service`);
  const service = await hooks.startService();
  try {
    const config = loadConfig({ ...process.env, ...service.env });
    const table = config.TABLE_NAME;
    const db = documentClientFor(config);
    const { payees, platformKey } = await setUpPayees(service, await hooks.adminToken(), config);
    const seeded = await seed(db, table, payees, history);
    progress(`  seeding took ${round(seeded.ms / 1000)} s; waiting for the service to go idle`);
    const idleWaitMs = await waitUntilIdle(service, IDLE_WAIT_MS, () => progress(`  the service was still busy after ${IDLE_WAIT_MS / 1000} s; measuring anyway`));
    progress(`  idle after ${round(idleWaitMs / 1000)} s (machine load average ${loadavg().map(round).join(', ')}); POST /settlements/run (platform key, SETTLEMENT_CUTOFF=${config.SETTLEMENT_CUTOFF})`);
    const run = await runUntilSettled(service, platformKey, seeded.eligibleIds.size);
    await verify(db, table, payees, seeded, run.batches);
    if (run.batches.length !== seeded.expectedBatches) throw new Error(`settlement run: ${run.batches.length} batches, planned ${seeded.expectedBatches}`);
    return { label, history, seeded, idleWaitMs, calls: run.calls, untilBatchedMs: run.untilBatchedMs, batches: run.batches.length, cpuSeconds: run.cpuSeconds };
  } finally {
    await hooks.stopService(service);
  }
}

/** One merchant's waiting payments for the one-group scenario: 100,000 make 10 batches of 10,000. */
const ONE_GROUP = Number(process.env.BENCH_SETTLEMENT_ONE_GROUP ?? 100_000);
/** The one-group scenario is waited for at most this long (its target is 240 s). */
const ONE_GROUP_WAIT_MS = 900_000;

/** Every batch of one partner, through `GET /settlements` page by page (pages stop before ~4 MB). */
async function listedBatches(service: ServiceProcess, apiKey: string): Promise<RunBatch[]> {
  const batches: RunBatch[] = [];
  let cursor: string | null = null;
  do {
    const response = await fetch(`${service.baseUrl}/settlements?limit=200${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, { headers: { 'x-api-key': apiKey } });
    const body = (await response.json()) as { items: RunBatch[]; next_cursor: string | null };
    if (response.status !== 200) throw new Error(`GET /settlements answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
    batches.push(...body.items);
    cursor = body.next_cursor;
  } while (cursor !== null);
  return batches;
}

/**
 * c. One merchant's `ONE_GROUP` waiting payments in one currency: one `POST /settlements/run`, which makes what it can
 * in its 29 s and sends the rest to the continuation queue; timed until `GET /settlements` lists every payment in a
 * batch (decisions.md §7: 10 batches of 10,000).
 */
async function measureOneGroup(hooks: SettlementBenchHooks) {
  progress(`\nSettlement (one merchant, ${ONE_GROUP.toLocaleString('en')} eligible in one currency): starting a fresh service`);
  const service = await hooks.startService();
  try {
    const config = loadConfig({ ...process.env, ...service.env });
    const db = documentClientFor(config);
    const { payees, partnerKeys } = await setUpPayees(service, await hooks.adminToken(), config);
    const payee = { ...(payees[0] as Payee), currencies: ['EUR'] };
    const seeded = await seed(db, config.TABLE_NAME, [payee], 0, { eligible: ONE_GROUP, refundedEvery: 0 });
    progress(`  seeding took ${round(seeded.ms / 1000)} s; waiting for the service to go idle`);
    await waitUntilIdle(service, IDLE_WAIT_MS, () => progress(`  the service was still busy after ${IDLE_WAIT_MS / 1000} s; measuring anyway`));
    const apiKey = partnerKeys.get(payee.partnerId) as string;
    const started = performance.now();
    const response = await fetch(`${service.baseUrl}/settlements/run?client_id=${encodeURIComponent(payee.clientId)}`, { method: 'POST', headers: { 'x-api-key': apiKey } });
    const answer = (await response.json()) as { created_batches: number; continuing: boolean };
    const answeredMs = performance.now() - started;
    if (response.status !== 200) throw new Error(`POST /settlements/run answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`);
    progress(`  the run answered in ${Math.round(answeredMs)} ms: ${answer.created_batches} batches, continuing ${answer.continuing}`);
    const batches = await untilListed(service, apiKey, seeded.eligibleIds.size, started);
    const settledMs = performance.now() - started;
    await verify(db, config.TABLE_NAME, [payee], seeded, batches);
    if (batches.length !== seeded.expectedBatches) throw new Error(`one-group settlement: ${batches.length} batches, planned ${seeded.expectedBatches}`);
    return { seeded, answeredMs, firstCallBatches: answer.created_batches, continuing: answer.continuing, settledMs, batches: batches.length };
  } finally {
    await hooks.stopService(service);
  }
}

/** Runs both scenarios, prints a table, and returns the figures (main.ts puts them in its JSON line). */
export async function benchSettlement(hooks: SettlementBenchHooks) {
  const alone = await measure(hooks, `${ELIGIBLE.toLocaleString('en')} eligible`, 0);
  const withHistory = await measure(hooks, `${ELIGIBLE.toLocaleString('en')} eligible + ${HISTORY.toLocaleString('en')} settled`, HISTORY);
  const oneGroup = await measureOneGroup(hooks);
  const ratio = Math.round((withHistory.untilBatchedMs / alone.untilBatchedMs) * 100) / 100;
  const machine = `${availableParallelism()} cores, ${cpus()[0]?.model.trim() ?? 'unknown CPU'}`;

  const { out } = hooks;
  out.log(`\nSettlement run, POST /settlements/run with a platform key (every partner) until it creates no batch; ${machine}`);
  out.table(
    [alone, withHistory].map((result) => ({
      scenario: result.label,
      seeded: result.seeded.items,
      seed_s: round(result.seeded.ms / 1000),
      batches: result.calls.reduce((sum, call) => sum + call.batches, 0),
      calls_with_batches: result.calls.filter((call) => call.batches > 0).length,
      batches_per_call: result.calls.map((call) => call.batches).join(' + '),
      first_call_ms: Math.round(result.calls[0]?.ms ?? NaN),
      until_batched_ms: Math.round(result.untilBatchedMs),
      empty_call_ms: Math.round(result.calls.at(-1)?.ms ?? NaN),
      cpu_s: JSON.stringify(result.cpuSeconds),
    })),
  );
  out.log(`Targets: everything batched within 30,000 ms; with history at most 1.2x. Ratio: ${ratio}`);
  out.log(
    `\nOne merchant, ${ONE_GROUP.toLocaleString('en')} waiting payments in one currency: one POST /settlements/run (answered in ${Math.round(oneGroup.answeredMs)} ms with ${oneGroup.firstCallBatches} batches, continuing ${oneGroup.continuing}), the rest by continuations: ${oneGroup.batches} batches, everything batched in ${round(oneGroup.settledMs / 1000)} s (target 240 s)`,
  );
  const summary = {
    settlement_eligible: ELIGIBLE,
    settlement_refund_entries: alone.seeded.refunds,
    settlement_history: HISTORY,
    settlement_run_10k_ms: Math.round(alone.untilBatchedMs),
    settlement_run_10k_calls: alone.calls.filter((call) => call.batches > 0).length,
    settlement_run_10k_first_call_ms: Math.round(alone.calls[0]?.ms ?? NaN),
    settlement_run_10k_with_history_ms: Math.round(withHistory.untilBatchedMs),
    settlement_run_10k_with_history_calls: withHistory.calls.filter((call) => call.batches > 0).length,
    settlement_history_ratio: ratio,
    settlement_batches: alone.batches,
    settlement_groups: alone.seeded.groups,
    settlement_one_group_payments: ONE_GROUP,
    settlement_one_group_batches: oneGroup.batches,
    settlement_one_group_first_answer_ms: Math.round(oneGroup.answeredMs),
    settlement_one_group_100k_s: round(oneGroup.settledMs / 1000),
    settlement_seed_history_ms: Math.round(withHistory.seeded.ms),
    nproc: availableParallelism(),
  };
  return summary;
}
