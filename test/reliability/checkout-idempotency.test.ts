/**
 * Reliability of the one-call checkout (docs/checkout.md; decisions.md §4): under concurrency and under
 * faults between the processor call and the DynamoDB write, one attempt (idempotency key + body) is one
 * transaction and one payment intent at the processor, and every answer names those two.
 *
 * The service runs against a sandbox processor of this file's own, so its intents can be counted (the run's shared
 * sandbox lives in jest's main process). Intents are found by their metadata (`partner_reference`), transactions by
 * `GET /transactions?partner_reference=`.
 *
 * Already covered elsewhere, and not repeated here: a sequential retry after the transaction write threw once,
 * and the processor forgetting its idempotency key (test/integration/transactions/checkout.test.ts); 10
 * concurrent client creates with one key (test/integration/partners-and-keys/partner-access.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyResultV2 } from 'aws-lambda';
import type { ApiResponse as Response, PartnerCredentials as Credentials, TestApi as Api } from '../support/api';
import { startProcessorSandbox, type ProcessorSandbox } from '../../infra/local/sandbox/processor';
import { freePort } from '../support/ports';

const SECRET_KEY = 'sk_test_reliability_checkout';
const sandbox: ProcessorSandbox = await startProcessorSandbox({
  port: await freePort(),
  secretKey: SECRET_KEY,
  publishableKey: 'pk_test_reliability_checkout',
  webhookSecret: 'whsec_reliability_checkout',
  webhookUrl: `http://127.0.0.1:${await freePort()}/unused`,
  retryDelaysMs: [],
});
// The service's configuration is read once, when its modules load: point it at this sandbox first.
process.env.PROCESSOR_API_BASE = sandbox.url;
process.env.PROCESSOR_SECRET_KEY = SECRET_KEY;
const { TestApi, sign } = await import('../support/api');
const { createHandler } = await import('../../functions/transactions-checkout-intent');
const { transactionDeps } = await import('../../lib/composition/transactions');
const store = await import('../../lib/store/transactions');
const { httpEvent, lambdaContext } = await import('../support/events');
const { retryWhileInUse, tally, times } = await import('../support/reliability/tools');
const { startChild } = await import('../support/reliability/child');

const PATH = '/transactions/checkout-intent';
const ROUTE_PATH = `/api/v1${PATH}`;
const TEST_TIMEOUT_MS = 60_000;

let api: Api;
beforeAll(async () => {
  api = await TestApi.start();
});
afterAll(async () => {
  await api.close();
  await sandbox.close();
});

/** A fresh partner and client for each test: its rate-limit window and idempotency keys are its own. */
async function payee(): Promise<{ partner: Credentials; clientId: string }> {
  const partner = await api.createPartner();
  return { partner, clientId: await api.createClient(partner) };
}

const bodyOf = (partner: Credentials, clientId: string, overrides: Record<string, unknown> = {}) => ({
  partner_id: partner.partnerId,
  client_id: clientId,
  amount: 49.99,
  currency: 'EUR',
  email: 'buyer@example.com',
  partner_reference: `order-${randomUUID()}`,
  meta: { cart: 'c-1' },
  ...overrides,
});

const intentsOf = (reference: string) => sandbox.intents().filter((intent) => intent.metadata.partner_reference === reference);

async function transactionsOf(partner: Credentials, reference: string): Promise<Array<Record<string, any>>> {
  const listed = await api.read(partner, `/transactions?limit=200&partner_reference=${encodeURIComponent(reference)}`);
  expect(listed.status).toBe(200);
  return listed.body.items;
}

/** The checkout exactly as a partner retries it: the same raw bytes, signature and idempotency key. */
const resend = (partner: Credentials, rawBody: string, idempotencyKey: string) => () => api.signed(partner, PATH, undefined, { rawBody, idempotencyKey });

/** The API Gateway event of that same request, for a handler invoked in this process. */
const eventOf = (partner: Credentials, rawBody: string, idempotencyKey: string) =>
  httpEvent({
    method: 'POST',
    path: ROUTE_PATH,
    body: rawBody,
    headers: { 'content-type': 'application/json', 'x-api-key': partner.apiKey, 'x-svc-hmac': sign(partner.hmacSecret, rawBody), 'idempotency-key': idempotencyKey },
  });

/** A Lambda context whose clock runs: `ms` left at the start, so the chain cuts the handler off 2 s before that. */
const contextWithTimeLeft = (ms: number) => {
  const deadline = Date.now() + ms;
  return { ...lambdaContext(), getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) };
};

const parsed = (result: APIGatewayProxyResultV2) => {
  const answer = result as { statusCode: number; body?: string };
  return { status: answer.statusCode, body: JSON.parse(answer.body ?? '{}') as Record<string, any> };
};

/** The answer every 201 must carry for the one transaction and intent of an attempt. */
const created = (answer: Response) => ({
  svc_tx_id: answer.body.svc_tx_id,
  processor_payment_intent_id: answer.body.processor_payment_intent_id,
  client_secret: answer.body.client_secret,
});

describe('concurrent checkouts', () => {
  it('50 at once with one idempotency key and one body: one transaction, one intent; the rest are told to retry and then replay it', async () => {
    // Arrange
    const { partner, clientId } = await payee();
    const body = bodyOf(partner, clientId);
    const rawBody = JSON.stringify(body);
    const key = `checkout-${body.partner_reference}`;

    // Act: 50 at once; each one told 409 IDEMPOTENCY_KEY_IN_USE retries as a partner would, with the same key
    const firstAnswers = await times(50, () => resend(partner, rawBody, key)());
    const finalAnswers = await Promise.all(firstAnswers.map(async (answer) => (answer.status === 409 ? (await retryWhileInUse(resend(partner, rawBody, key))).at(-1)! : answer)));

    // Assert: the first answers: one ran, the others were in flight (409 with Retry-After) or replayed it
    const counts = tally(firstAnswers);
    expect(Object.keys(counts).every((status) => ['201', '409 IDEMPOTENCY_KEY_IN_USE'].includes(status))).toBe(true);
    const ran = [...firstAnswers, ...finalAnswers].filter((answer) => answer.status === 201 && answer.body.idempotentReplay !== true);
    expect(new Set(ran.map((answer) => answer.body.svc_tx_id)).size).toBe(1);
    for (const answer of firstAnswers.filter((a) => a.status === 409)) expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Assert: in the end all 50 hold the same transaction, intent and client secret
    expect(finalAnswers.map((answer) => answer.status)).toEqual(Array(50).fill(201));
    const expected = created(ran[0]!);
    for (const answer of finalAnswers) expect(created(answer)).toEqual(expected);
    // Assert: one intent at the processor, one transaction, linked to each other
    const intents = intentsOf(body.partner_reference);
    expect(intents.map((intent) => intent.id)).toEqual([expected.processor_payment_intent_id]);
    expect(intents[0]?.metadata.svc_tx_id).toBe(expected.svc_tx_id);
    const transactions = await transactionsOf(partner, body.partner_reference);
    expect(transactions.map((tx) => [tx.svcTxId, tx.processorPaymentIntentId, tx.status])).toEqual([[expected.svc_tx_id, expected.processor_payment_intent_id, 'pending']]);
  }, TEST_TIMEOUT_MS);

  it('50 at once with 50 idempotency keys and one body: 50 transactions, each with an intent of its own', async () => {
    // Arrange: the same body (so one partner_reference) under 50 keys: 50 attempts (docs/checkout.md)
    const { partner, clientId } = await payee();
    const body = bodyOf(partner, clientId);
    const rawBody = JSON.stringify(body);

    // Act
    const answers = await times(50, (i) => resend(partner, rawBody, `checkout-${body.partner_reference}-${i}`)());

    // Assert: 50 first runs, 50 different transactions and intents
    expect(tally(answers)).toEqual({ 201: 50 });
    expect(answers.every((answer) => answer.body.idempotentReplay === undefined)).toBe(true);
    const linkOf = new Map(answers.map((answer) => [answer.body.svc_tx_id as string, answer.body.processor_payment_intent_id as string]));
    expect(linkOf.size).toBe(50);
    expect(new Set(linkOf.values()).size).toBe(50);
    const intents = intentsOf(body.partner_reference);
    expect(intents).toHaveLength(50);
    for (const intent of intents) expect(linkOf.get(intent.metadata.svc_tx_id ?? '')).toBe(intent.id);
    const transactions = await transactionsOf(partner, body.partner_reference);
    expect(transactions).toHaveLength(50);
    for (const tx of transactions) expect(linkOf.get(tx.svcTxId)).toBe(tx.processorPaymentIntentId);
  }, TEST_TIMEOUT_MS);

  it('10 at once with one idempotency key and 10 different bodies: one transaction and one intent, the other bodies 422 IDEMPOTENCY_KEY_REUSED', async () => {
    // Arrange: the same order, its amount differing per body (a partner bug: the key reused for changed bodies)
    const { partner, clientId } = await payee();
    const reference = `order-${randomUUID()}`;
    const key = `checkout-${reference}`;
    const rawBodies = Array.from({ length: 10 }, (_, i) => JSON.stringify(bodyOf(partner, clientId, { partner_reference: reference, amount: 10 + i })));

    // Act
    const answers = await Promise.all(rawBodies.map(async (rawBody) => (await retryWhileInUse(resend(partner, rawBody, key))).at(-1)!));

    // Assert
    expect(tally(answers)).toEqual({ 201: 1, '422 IDEMPOTENCY_KEY_REUSED': 9 });
    const winner = answers.find((answer) => answer.status === 201)!;
    expect(intentsOf(reference).map((intent) => intent.id)).toEqual([winner.body.processor_payment_intent_id]);
    expect((await transactionsOf(partner, reference)).map((tx) => tx.svcTxId)).toEqual([winner.body.svc_tx_id]);
  }, TEST_TIMEOUT_MS);
});

describe('faults between the processor call and the transaction write, then a retry with the same key', () => {
  it('the write throws once; 10 concurrent retries: one transaction, and the intent of the failed attempt', async () => {
    // Arrange: the real handler, whose first transaction write fails after the intent was created
    const { partner, clientId } = await payee();
    const body = bodyOf(partner, clientId);
    const rawBody = JSON.stringify(body);
    const key = `checkout-${body.partner_reference}`;
    let writes = 0;
    const failingOnce = createHandler({
      ...transactionDeps,
      transactions: {
        ...store,
        createTransaction: async (tx, completion) => {
          if (writes++ === 0) throw new Error('injected: the write was lost after the intent was created');
          return store.createTransaction(tx, completion);
        },
      },
    });

    // Act
    const failed = parsed(await failingOnce(eventOf(partner, rawBody, key), contextWithTimeLeft(29_000)));
    const orphan = intentsOf(body.partner_reference);
    const retries = await Promise.all(Array.from({ length: 10 }, async () => (await retryWhileInUse(resend(partner, rawBody, key))).at(-1)!));

    // Assert: the failure released the key; the retries share one new run, which found the same intent
    expect(failed.status).toBe(500);
    expect(orphan).toHaveLength(1);
    expect(tally(retries)).toEqual({ 201: 10 });
    expect(retries.filter((answer) => answer.body.idempotentReplay !== true)).toHaveLength(1);
    expect(new Set(retries.map((answer) => answer.body.processor_payment_intent_id))).toEqual(new Set([orphan[0]?.id]));
    expect(intentsOf(body.partner_reference)).toHaveLength(1);
    expect((await transactionsOf(partner, body.partner_reference)).map((tx) => tx.processorPaymentIntentId)).toEqual([orphan[0]?.id]);
  }, TEST_TIMEOUT_MS);

  it.each<[string, 'after-retry' | 'before-retry']>([
    ['after the retry has written it', 'after-retry'],
    ['before the retry (after the cut-off request released its key)', 'before-retry'],
  ])(
    'the write never returns in time (the request is cut off, 503) and then lands late, %s: one transaction, one intent',
    async (_name, zombieLands) => {
      // Arrange: the write waits for a gate the test opens later (a write stuck in the network)
      const { partner, clientId } = await payee();
      const body = bodyOf(partner, clientId);
      const rawBody = JSON.stringify(body);
      const key = `checkout-${body.partner_reference}`;
      let openGate = () => {};
      const gate = new Promise<void>((resolve) => (openGate = resolve));
      let zombie: Promise<string> | undefined;
      const stuck = createHandler({
        ...transactionDeps,
        transactions: {
          ...store,
          createTransaction: (tx, completion) => {
            const write = gate.then(() => store.createTransaction(tx, completion));
            zombie = write.then(
              () => 'written',
              (error: unknown) => (error as { code?: string }).code ?? (error as Error).name,
            );
            return write;
          },
        },
      });

      // Act: 4 s left, so the chain cuts the handler off at 2 s and releases the key
      const cutOff = parsed(await stuck(eventOf(partner, rawBody, key), contextWithTimeLeft(4_000)));
      if (zombieLands === 'before-retry') {
        openGate();
        await zombie;
      }
      const retried = (await retryWhileInUse(resend(partner, rawBody, key))).at(-1)!;
      openGate();
      const zombieOutcome = await zombie;

      // Assert: the late write was refused whole, whichever came first; the retry's transaction has the first intent
      expect([cutOff.status, cutOff.body.code]).toEqual([503, 'REQUEST_TIMED_OUT']);
      expect(zombieOutcome).toBe(zombieLands === 'before-retry' ? 'IDEMPOTENCY_KEY_IN_USE' : 'TransactionExists');
      expect(retried.status).toBe(201);
      expect(retried.body.idempotentReplay).toBeUndefined();
      const intents = intentsOf(body.partner_reference);
      expect(intents.map((intent) => intent.id)).toEqual([retried.body.processor_payment_intent_id]);
      const transactions = await transactionsOf(partner, body.partner_reference);
      expect(transactions.map((tx) => [tx.svcTxId, tx.processorPaymentIntentId])).toEqual([[retried.body.svc_tx_id, retried.body.processor_payment_intent_id]]);
    },
    TEST_TIMEOUT_MS,
  );

  it('the write lands but its answer is lost (the request is cut off, 503): the retry replays the stored 201, one transaction, one intent', async () => {
    // Arrange
    const { partner, clientId } = await payee();
    const body = bodyOf(partner, clientId);
    const rawBody = JSON.stringify(body);
    const key = `checkout-${body.partner_reference}`;
    const answerLost = createHandler({
      ...transactionDeps,
      transactions: { ...store, createTransaction: (tx, completion) => store.createTransaction(tx, completion).then(() => new Promise<never>(() => {})) },
    });

    // Act
    const cutOff = parsed(await answerLost(eventOf(partner, rawBody, key), contextWithTimeLeft(4_000)));
    const retried = (await retryWhileInUse(resend(partner, rawBody, key))).at(-1)!;

    // Assert: the idempotent answer was written with the transaction, so the retry is its replay
    expect([cutOff.status, cutOff.body.code]).toEqual([503, 'REQUEST_TIMED_OUT']);
    expect(retried.status).toBe(201);
    expect(retried.body.idempotentReplay).toBe(true);
    expect(intentsOf(body.partner_reference).map((intent) => intent.id)).toEqual([retried.body.processor_payment_intent_id]);
    expect((await transactionsOf(partner, body.partner_reference)).map((tx) => tx.svcTxId)).toEqual([retried.body.svc_tx_id]);
  }, TEST_TIMEOUT_MS);

  it('the process is killed (SIGKILL) between the processor call and the write: the retry waits out the dead request`s lease, then finds the same intent', async () => {
    // Arrange: a child process invoking the same handler as the local runtime does, whose write for this order
    // never happens: it prints INTENT_CREATED (the intent exists by then) and waits, and the test kills it there. A
    // warm-up checkout first, so the doomed one runs warm within its short deadline.
    const { partner, clientId } = await payee();
    const body = bodyOf(partner, clientId);
    const rawBody = JSON.stringify(body);
    const key = `checkout-${body.partner_reference}`;
    const warmUp = JSON.stringify(bodyOf(partner, clientId));
    const requests = [
      { event: eventOf(partner, warmUp, `warm-${randomUUID()}`), timeLeftMs: 29_000 },
      { event: eventOf(partner, rawBody, key), timeLeftMs: 4_000 },
    ];
    const child = startChild(
      `
      import { invokeFunction } from './infra/local/lambda/adapter.ts';
      import { createHandler } from './functions/transactions-checkout-intent.ts';
      import { transactionDeps } from './lib/composition/transactions.ts';
      const doomed = process.env.RELIABILITY_DOOMED_REFERENCE;
      const handler = createHandler({
        ...transactionDeps,
        transactions: {
          ...transactionDeps.transactions,
          createTransaction: (tx, completion) => {
            if (tx.partnerReference !== doomed) return transactionDeps.transactions.createTransaction(tx, completion);
            process.stdout.write('INTENT_CREATED\\n');
            return new Promise(() => {});
          },
        },
      });
      for (const { event, timeLeftMs } of JSON.parse(process.env.RELIABILITY_REQUESTS)) {
        const answer = await invokeFunction(handler, event, 'transactions-checkout-intent', timeLeftMs);
        process.stdout.write('ANSWERED ' + answer.statusCode + '\\n');
      }
      `,
      { RELIABILITY_DOOMED_REFERENCE: body.partner_reference, RELIABILITY_REQUESTS: JSON.stringify(requests) },
    );

    // Act: kill it the moment the intent exists and the write is due
    try {
      const printed = await child.printed('INTENT_CREATED', 40_000);
      expect(printed.split('\n')[0]).toBe('ANSWERED 201');
    } finally {
      await child.kill();
    }
    const orphan = intentsOf(body.partner_reference);
    const killedAt = Date.now();
    const answers = await retryWhileInUse(resend(partner, rawBody, key), { waitMs: 250 });

    // Assert: the dead request still held the key (nothing released it), until its lease (4 s + 1 s) ran out
    expect(orphan).toHaveLength(1);
    expect(answers.length).toBeGreaterThan(1);
    expect(answers[0]?.body.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    const retried = answers.at(-1)!;
    expect(retried.status).toBe(201);
    expect(retried.body.idempotentReplay).toBeUndefined();
    expect(retried.body.processor_payment_intent_id).toBe(orphan[0]?.id);
    expect(intentsOf(body.partner_reference)).toHaveLength(1);
    const transactions = await transactionsOf(partner, body.partner_reference);
    expect(transactions.map((tx) => [tx.svcTxId, tx.processorPaymentIntentId, tx.status])).toEqual([[retried.body.svc_tx_id, orphan[0]?.id, 'pending']]);
    // ... and a replay now answers the same
    const replay = await resend(partner, rawBody, key)();
    expect(replay.body).toEqual({ ...retried.body, idempotentReplay: true });
  }, TEST_TIMEOUT_MS);
});
