/**
 * The DB bound of `npm run bench`: DynamoDB Local's own rate for the exact DynamoDB calls one
 * checkout-intent makes, sent by a bare SDK loop in the bench's process: lib-dynamodb commands, none of the
 * service's code but its key builders and the transaction item's shape, with the real partner, API key and
 * client the service uses, and fresh idempotency keys, `svc_tx_id`s and intent ids each time. One sequence:
 *
 *   1. BatchGetItem, strongly consistent: the API key item, the partner, the client (`findApiKeyAndPayee`);
 *   2. UpdateItem ADD on the partner's rate window (`countRequest`);
 *   3. UpdateItem, conditional: the idempotency claim (`claimIdempotencyKey`);
 *   4. TransactWriteItems: the transaction (attribute_not_exists), the intent link, the partner and the client
 *      still active (2 ConditionChecks), the idempotency record completed on its lease (`createTransaction` with
 *      `completionItem`).
 */
import { createHash, randomInt, randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { hashApiKey } from '../lib/auth/credentials';
import { loadConfig } from '../lib/config';
import { newId, randomBase32 } from '../lib/domain/ids';
import { currencyCode } from '../lib/domain/money';
import { rateWindowOf } from '../lib/domain/rate-limit';
import type { Transaction } from '../lib/domain/transaction';
import { claimUpdate, completionUpdate } from '../lib/store/idempotency';
import { API_KEY_COPIES, keys } from '../lib/store/keys';
import { transactionItem } from '../lib/store/transactions';
import { checkoutBody, type BenchPartner } from './api';
import { type ServiceProcess, cpuBetween, cpuSnapshot, round, type Slice, ticker } from '../infra/local/runtime/service-process';
import { NO_REVERSALS } from '../lib/domain/ledger';

export interface Payee {
  partner: BenchPartner;
  clientId: string;
  clientName: string;
}

/** The route key the idempotency record is scoped by (API Gateway's `routeKey`). */
const CHECKOUT_ROUTE_KEY = 'POST /api/v1/transactions/checkout-intent';

export type CallTimes = { batch_get: number; rate_window: number; idempotency_claim: number; transact_write: number };

/**
 * The DB-bound loop: `concurrency` workers, each sending one sequence after another. `responseBody` is a real
 * checkout's answer, stored (with its `svc_tx_id` changed) as the service stores the idempotent replay, so the
 * completion writes an item of the same size.
 */
export function dbBoundLoop(service: ServiceProcess, payee: Payee, responseBody: string, concurrency: number) {
  const config = loadConfig({ ...process.env, ...service.env });
  const table = config.TABLE_NAME;
  // As lib/store/dynamo.ts builds the service's client.
  const db = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: config.AWS_REGION,
      endpoint: config.DYNAMODB_ENDPOINT,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      requestHandler: { connectionTimeout: 2_000, requestTimeout: 5_000, throwOnRequestTimeout: true },
    }),
    { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false } },
  );
  const { partnerId } = payee.partner;
  const keyHash = hashApiKey(payee.partner.apiKey);
  const partnerKey = keys.partner(partnerId);
  const clientKey = keys.client(partnerId, payee.clientId);
  const svcTxIdInSample = /svc_tx_[0-9a-z]{24}/.exec(responseBody)?.[0];
  const callMs: CallTimes = { batch_get: 0, rate_window: 0, idempotency_claim: 0, transact_write: 0 };
  let measuredSequences = 0;

  let reference = 0;
  const sequence = async () => {
    let mark = performance.now();
    const lap = (call: keyof typeof callMs) => {
      const now = performance.now();
      callMs[call] += now - mark;
      mark = now;
    };
    // 1. the API key (one of its copies at random, as the service reads it) and the payee the body names, one strongly
    // consistent BatchGetItem
    const keyItem = keys.apiKeyCopy(keyHash, randomInt(API_KEY_COPIES));
    const read = await db.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: [keyItem, partnerKey, clientKey], ConsistentRead: true } } }));
    if ((read.Responses?.[table]?.length ?? 0) !== 3) throw new Error(`DB bound: BatchGetItem found ${read.Responses?.[table]?.length ?? 0} of the 3 items`);
    lap('batch_get');
    // 2. the partner's rate window
    const nowMs = Date.now();
    const windowStartMinute = Math.floor(nowMs / 60_000);
    await db.send(
      new UpdateCommand({
        TableName: table,
        // the bench partner's limit (1,000,000 a minute) splits its window: one counter at random, as the service does
        Key: keys.rateWindow(partnerId, windowStartMinute, randomInt(rateWindowOf(1_000_000).counters)),
        UpdateExpression: 'ADD requestCount :one SET expiresAt = if_not_exists(expiresAt, :expiresAt), entity = :entity',
        ExpressionAttributeValues: { ':one': 1, ':expiresAt': (windowStartMinute + 5) * 60, ':entity': 'rateWindow' },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    lap('rate_window');
    // 3. the idempotency claim, conditional
    const raw = JSON.stringify(checkoutBody(partnerId, payee.clientId, `db-bound-${++reference}`));
    const fingerprint = createHash('sha256').update(raw, 'utf8').digest('hex');
    const idempotencyKey = randomUUID();
    const lockToken = randomUUID();
    await db.send(new UpdateCommand({ ...claimUpdate({ owner: partnerId, endpoint: CHECKOUT_ROUTE_KEY, idempotencyKey, fingerprint, lockToken, lockMs: 30_000, nowMs }, randomBase32()), TableName: table }));
    lap('idempotency_claim');
    // 4. transaction + intent link + payee still active + idempotency completed, one TransactWriteItems
    const now = new Date().toISOString();
    const tx: Transaction = {
      id: newId.transactionRecord(),
      svcTxId: newId.svcTx(),
      partnerId,
      partnerName: payee.partner.name,
      clientId: payee.clientId,
      clientName: payee.clientName,
      partnerReference: `db-bound-${reference}`,
      processorPaymentIntentId: `pi_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
      amountMinor: 1000,
      currency: currencyCode('USD'),
      status: 'pending',
      settlementStatus: 'unsettled',
      fees: null,
      reversals: NO_REVERSALS,
      revision: 0,
      receiptEmail: 'buyer@example.com',
      statementDescriptorSuffix: null,
      meta: null,
      createdAt: now,
      updatedAt: now,
    };
    const body = svcTxIdInSample === undefined ? responseBody : responseBody.replaceAll(svcTxIdInSample, tx.svcTxId);
    await db.send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: table, Item: transactionItem(tx), ConditionExpression: 'attribute_not_exists(pk)' } },
          {
            Put: {
              TableName: table,
              Item: { ...keys.paymentIntent(tx.processorPaymentIntentId ?? ''), entity: 'paymentIntentLink', paymentIntentId: tx.processorPaymentIntentId, svcTxId: tx.svcTxId },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            ConditionCheck: {
              TableName: table,
              Key: partnerKey,
              ConditionExpression: '#status = :active AND kycStatus = :approved',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':active': 'active', ':approved': 'approved' },
            },
          },
          {
            ConditionCheck: {
              TableName: table,
              Key: clientKey,
              ConditionExpression: '#status = :active',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':active': 'active' },
            },
          },
          { Update: { ...completionUpdate({ owner: partnerId, endpoint: CHECKOUT_ROUTE_KEY, idempotencyKey, lockToken }, { statusCode: 201, body }), TableName: table } },
        ],
      }),
    );
    lap('transact_write');
  };

  /** `concurrency` workers until `until()` says stop; each sequence's end time and duration. */
  const run = async (until: (done: number) => boolean, ended: Array<{ at: number; ms: number }> = []) => {
    const worker = async () => {
      while (!until(ended.length)) {
        const started = performance.now();
        await sequence();
        const at = performance.now();
        ended.push({ at, ms: at - started });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return ended;
  };

  return {
    warmup: async (sequences: number) => {
      await run((done) => done >= sequences);
      for (const call of Object.keys(callMs) as Array<keyof CallTimes>) callMs[call] = 0;
    },
    /** Runs `seconds`; counts the sequences that ended within them (the time is the window itself). */
    measure: async (seconds: number): Promise<Slice> => {
      const ended: Array<{ at: number; ms: number }> = [];
      const cpuBefore = cpuSnapshot(service);
      const deadline = performance.now() + seconds * 1000;
      const stop = ticker('DB bound sequences', () => ended.length);
      await run(() => performance.now() >= deadline, ended).finally(stop);
      const cpu = cpuBetween(cpuBefore, cpuSnapshot(service));
      measuredSequences += ended.length;
      return { latencies: ended.filter((sequence) => sequence.at <= deadline).map((sequence) => sequence.ms), seconds, cpu, ops: ended.length };
    },
    /** Mean milliseconds of each call over every measured sequence. */
    callMs: (): CallTimes => {
      const mean = (total: number) => round(total / measuredSequences);
      return { batch_get: mean(callMs.batch_get), rate_window: mean(callMs.rate_window), idempotency_claim: mean(callMs.idempotency_claim), transact_write: mean(callMs.transact_write) };
    },
    close: () => db.destroy(),
  };
}
