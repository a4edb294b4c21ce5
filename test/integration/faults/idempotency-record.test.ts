/**
 * Fault injection into the idempotency record itself (the attack run's kill -9 of DynamoDB Local mid-request):
 * the table stops answering after the handler ran, so the chain can neither release nor complete the key. The
 * caller must still get the spec's JSON error body (503 SERVICE_UNAVAILABLE with `Retry-After`) for a failure,
 * the real answer for a success, and a retry with the same key must never make a second transaction.
 *
 * The faults are injected in the service's own DynamoDB client (a middleware that fails the chosen idempotency
 * write the way a dead DynamoDB Local does: ECONNREFUSED), so everything else runs against DynamoDB Local.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { createHandler as createCheckoutHandler } from '../../../functions/transactions-checkout-intent';
import { transactionDeps } from '../../../lib/composition';
import { httpRoute } from '../../../lib/composition/http-route';
import { errors } from '../../../lib/domain/errors';
import { TransactionConflictException } from '@aws-sdk/client-dynamodb';
import { dynamoClient } from '../../../lib/store/dynamo';
import { sign, usePartnerSuite } from '../../support/api';
import { httpEvent, lambdaContext } from '../../support/events';

const suite = usePartnerSuite();

const FAULT = 'injected-idempotency-fault';

/** What the SDK throws when nothing listens on DynamoDB's port any more. */
const connectionRefused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' });

type SettleWrite = 'complete' | 'release';

/**
 * Which settling write of an idempotency record a call is (both are UpdateItem, as is the claim), if any: the
 * key's partition and the status the update sets. `pk` is plain before the document client marshals it, `{ S }` after.
 */
function settleWriteOf(commandName: string | undefined, input: unknown): SettleWrite | undefined {
  const { Key, UpdateExpression } = input as { Key?: { pk?: string | { S?: string } }; UpdateExpression?: string };
  const pk = typeof Key?.pk === 'string' ? Key.pk : Key?.pk?.S;
  if (commandName !== 'UpdateItemCommand' || pk?.startsWith('IDEMPOTENCY#') !== true) return undefined;
  if (UpdateExpression?.includes('= :completed') === true) return 'complete';
  return UpdateExpression?.includes('= :released') === true ? 'release' : undefined;
}

/** Fails the next `times` calls of `write` (complete or release) on an idempotency record; every other call goes through. */
function failIdempotencyWrites(write: SettleWrite, times = 1): { failed: () => number } {
  let failed = 0;
  dynamoClient.middlewareStack.add(
    (next, context) => async (args) => {
      if (settleWriteOf(context.commandName, args.input) === write && failed < times) {
        failed++;
        throw connectionRefused();
      }
      return next(args);
    },
    { step: 'initialize', name: FAULT },
  );
  return { failed: () => failed };
}
afterEach(() => {
  dynamoClient.middlewareStack.remove(FAULT);
});

/** A Lambda context whose remaining time runs out `remainingMs` from now (the lease is that plus a second). */
function contextWithRemaining(remainingMs: number) {
  const deadline = Date.now() + remainingMs;
  return { ...lambdaContext(), getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function signedEvent(path: string, body: string, idempotencyKey: string) {
  return httpEvent({
    method: 'POST',
    path,
    body,
    headers: {
      'content-type': 'application/json',
      'x-api-key': suite.partner.apiKey,
      'x-svc-hmac': sign(suite.partner.hmacSecret, body),
      'idempotency-key': idempotencyKey,
    },
  });
}

describe('a failed request whose idempotency key cannot be released', () => {
  it('answers 503 SERVICE_UNAVAILABLE with Retry-After and the JSON error body, not a bare 500; the key frees itself with its lease', async () => {
    // Arrange: the table dies under the handler, and stays dead for the release
    let calls = 0;
    const route = httpRoute({ access: 'partner-mutation', partnerOnly: true }, async () => {
      calls++;
      if (calls === 1) throw connectionRefused();
      return { status: 201, body: { attempt: calls } };
    });
    const fault = failIdempotencyWrites('release');
    const key = randomUUID();
    const event = () => signedEvent('/api/v1/test/release-fault', '{}', key);

    // Act
    const failed = await route(event(), contextWithRemaining(2_500));
    const whileLeased = await route(event(), lambdaContext());
    await sleep(3_600); // the lease: the 2.5 s the first request had left, plus a second
    const afterLease = await route(event(), lambdaContext());

    // Assert
    expect(fault.failed()).toBe(1);
    expect(failed.statusCode).toBe(503);
    expect(failed.headers?.['Retry-After']).toBe('1');
    expect(JSON.parse(failed.body ?? '')).toEqual({ error: expect.any(String), code: 'SERVICE_UNAVAILABLE' });
    expect(whileLeased.statusCode).toBe(409);
    expect(JSON.parse(whileLeased.body ?? '').code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(afterLease.statusCode).toBe(201);
    expect(calls).toBe(2);
  }, 15_000);

  it('answers an unexpected error whose key cannot be released with the generic JSON 500 body', async () => {
    const route = httpRoute({ access: 'partner-mutation', partnerOnly: true }, async () => {
      throw new Error('injected: a bug');
    });
    const fault = failIdempotencyWrites('release');

    const response = await route(signedEvent('/api/v1/test/unexpected', '{}', randomUUID()), lambdaContext());

    expect(fault.failed()).toBe(1);
    expect(response.statusCode).toBe(500);
    expect(JSON.parse(response.body ?? '')).toEqual({ error: 'Internal server error', code: 'INTERNAL_ERROR' });
  });
});

describe('a claim that meets the first request storing its answer', () => {
  it('answers 409 IDEMPOTENCY_KEY_IN_USE with Retry-After (DynamoDB refuses a write to an item a transaction holds), never a 500', async () => {
    // Arrange: the claim's UpdateItem meets the holder's TransactWriteItems on the record, as DynamoDB answers it
    let handled = 0;
    const route = httpRoute({ access: 'partner-mutation', partnerOnly: true }, async () => {
      handled++;
      return { status: 201, body: {} };
    });
    let refused = 0;
    dynamoClient.middlewareStack.add(
      (next, context) => async (args) => {
        const { Key, UpdateExpression } = args.input as { Key?: { pk?: string }; UpdateExpression?: string };
        const isClaim = context.commandName === 'UpdateItemCommand' && Key?.pk?.startsWith('IDEMPOTENCY#') === true && UpdateExpression?.includes('if_not_exists(nonce') === true;
        if (isClaim && refused === 0) {
          refused++;
          throw new TransactionConflictException({ message: 'Transaction is ongoing for the item', $metadata: {} });
        }
        return next(args);
      },
      { step: 'initialize', name: FAULT },
    );
    const key = randomUUID();

    // Act: the duplicate meets the conflict; then it retries as told
    const duplicate = await route(signedEvent('/api/v1/test/claim-conflict', '{}', key), lambdaContext());
    const retried = await route(signedEvent('/api/v1/test/claim-conflict', '{}', key), lambdaContext());

    // Assert
    expect(refused).toBe(1);
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.headers?.['Retry-After']).toBe('1');
    expect(JSON.parse(duplicate.body ?? '')).toEqual({ error: expect.any(String), code: 'IDEMPOTENCY_KEY_IN_USE' });
    expect(retried.statusCode).toBe(201);
    expect(handled).toBe(1);
  });
});

describe('a business answer whose idempotency record cannot be completed', () => {
  it('is answered as the handler gave it (409 CLIENT_EXISTS with its JSON body), not as a 5xx', async () => {
    const route = httpRoute({ access: 'partner-mutation', partnerOnly: true }, async () => {
      throw errors.clientExists();
    });
    const fault = failIdempotencyWrites('complete');

    const response = await route(signedEvent('/api/v1/test/exists', '{}', randomUUID()), lambdaContext());

    expect(fault.failed()).toBe(1);
    expect(response.statusCode).toBe(409);
    expect(JSON.parse(response.body ?? '')).toEqual({ error: expect.any(String), code: 'CLIENT_EXISTS' });
  });
});

/**
 * Sends the next call of `command` on an idempotency record to a server that accepts the connection and never
 * answers (a table that hangs instead of refusing); every other call goes to DynamoDB Local.
 */
async function hangIdempotencyWrite(write: SettleWrite): Promise<{ hung: () => number; close: () => void }> {
  const sockets: Socket[] = [];
  const blackHole = createServer((socket) => sockets.push(socket));
  await new Promise<void>((listening) => blackHole.listen(0, '127.0.0.1', listening));
  const { port } = blackHole.address() as AddressInfo;
  let hung = 0;
  dynamoClient.middlewareStack.add(
    (next, context) => async (args) => {
      const request = args.request as { hostname: string; port?: number };
      if (settleWriteOf(context.commandName, args.input) === write && hung === 0) {
        hung++;
        request.hostname = '127.0.0.1';
        request.port = port;
      }
      return next(args);
    },
    { step: 'finalizeRequest', name: FAULT },
  );
  return {
    hung: () => hung,
    close: () => {
      for (const socket of sockets) socket.destroy();
      blackHole.close();
    },
  };
}

describe('an idempotency record whose table hangs instead of refusing', () => {
  it('gives up on it within the function’s time left and answers the 201 the handler reached', async () => {
    const route = httpRoute({ access: 'partner-mutation', partnerOnly: true }, async () => ({ status: 201, body: { created: true } }));
    const fault = await hangIdempotencyWrite('complete');
    try {
      const startedAt = Date.now();
      const response = await route(signedEvent('/api/v1/test/hang', '{}', randomUUID()), contextWithRemaining(2_500));
      const tookMs = Date.now() - startedAt;

      expect(fault.hung()).toBe(1);
      expect(response.statusCode).toBe(201);
      // Within the 2.5 s the function had: the SDK alone would wait 5 s per attempt, three attempts.
      expect(tookMs).toBeLessThan(2_500);
    } finally {
      fault.close();
    }
  }, 30_000);
});

describe('a checkout whose transaction write fails (the table dies under it)', () => {
  it('writes nothing, answers 503, and a retry with the same key makes the same transaction with the same intent: its key completed in that write', async () => {
    // Arrange: the write of the transaction (which completes the idempotency key too) fails once
    const checkout = createCheckoutHandler(transactionDeps);
    const partnerReference = `order-${randomUUID()}`;
    const body = JSON.stringify({
      partner_id: suite.partner.partnerId,
      client_id: suite.clientId,
      amount: 25,
      currency: 'EUR',
      email: 'buyer@example.com',
      partner_reference: partnerReference,
    });
    const key = randomUUID();
    const path = '/api/v1/transactions/checkout-intent';
    let failed = 0;
    dynamoClient.middlewareStack.add(
      (next, context) => async (args) => {
        const items = (args.input as { TransactItems?: Array<{ Update?: { Key?: { pk?: unknown } } }> }).TransactItems ?? [];
        const completesKey = items.some((item) => typeof item.Update?.Key?.pk === 'string' && item.Update.Key.pk.startsWith('IDEMPOTENCY#'));
        if (context.commandName === 'TransactWriteItemsCommand' && completesKey && failed === 0) {
          failed++;
          throw connectionRefused();
        }
        return next(args);
      },
      { step: 'initialize', name: FAULT },
    );

    // Act
    const first = await checkout(signedEvent(path, body, key), lambdaContext());
    const listedAfterFailure = await suite.api.read(suite.partner, `/transactions?partner_reference=${encodeURIComponent(partnerReference)}`);
    const retried = await checkout(signedEvent(path, body, key), lambdaContext());
    const replayed = await checkout(signedEvent(path, body, key), lambdaContext());
    const listed = await suite.api.read(suite.partner, `/transactions?partner_reference=${encodeURIComponent(partnerReference)}`);

    // Assert: the failure wrote nothing and released the key; the retry made one transaction and stored its answer
    expect(failed).toBe(1);
    expect(first.statusCode).toBe(503);
    expect(JSON.parse(first.body ?? '').code).toBe('SERVICE_UNAVAILABLE');
    expect(listedAfterFailure.body.items).toEqual([]);
    expect(retried.statusCode).toBe(201);
    const created = JSON.parse(retried.body ?? '');
    expect(replayed.headers?.['Idempotent-Replayed']).toBe('true');
    expect(JSON.parse(replayed.body ?? '')).toEqual({ ...created, idempotentReplay: true });
    expect(listed.body.items.map((item: { svcTxId: string }) => item.svcTxId)).toEqual([created.svc_tx_id]);
  }, 20_000);
});
