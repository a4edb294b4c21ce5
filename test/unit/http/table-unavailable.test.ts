/**
 * The error mapper on a table that is missing, busy or shedding load: a dependency unavailable (503 with
 * Retry-After), never a 500. The table's adapter (`lib/store/dynamo.ts`) judges its own errors; the mapper asks it.
 */
import { describe, expect, it } from '@jest/globals';
import { ResourceNotFoundException, TransactionCanceledException, TransactionConflictException } from '@aws-sdk/client-dynamodb';
import { errorResult as mapError } from '../../../lib/http/response';
import { isDependencyUnavailable, KeysLeftUnprocessed } from '../../../lib/store/dynamo';

/** The mapping as the chain does it: with the table's own judgement of which of its errors mean it is down. */
const errorResult = (error: unknown) => mapError(error, isDependencyUnavailable);

const unavailable = { status: 503, body: { error: expect.any(String), code: 'SERVICE_UNAVAILABLE' }, headers: { 'Retry-After': '1' } };
const cancelled = (...codes: string[]) =>
  new TransactionCanceledException({ message: 'Transaction cancelled', $metadata: {}, CancellationReasons: codes.map((Code) => ({ Code })) });

describe('errorResult', () => {
  it('maps a missing table to 503 SERVICE_UNAVAILABLE with Retry-After, never naming the table', () => {
    const missing = new ResourceNotFoundException({ message: 'Cannot do operations on a non-existent table: partner-payments', $metadata: {} });

    const result = errorResult(missing);

    expect(result).toEqual({
      status: 503,
      body: { error: expect.any(String), code: 'SERVICE_UNAVAILABLE' },
      headers: { 'Retry-After': '1' },
    });
    expect(JSON.stringify(result.body)).not.toContain('partner-payments');
  });

  it('still maps an error it does not know to the generic 500', () => {
    expect(errorResult(Object.assign(new Error('x'), { name: 'ResourceNotFoundException' }))).toEqual({
      status: 500,
      body: { error: 'Internal server error', code: 'INTERNAL_ERROR' },
    });
  });

  it('maps a busy table to 503: a write that met a transaction, a transaction that met other writes, keys left unprocessed', () => {
    expect(errorResult(new TransactionConflictException({ message: 'Transaction is ongoing for the item', $metadata: {} }))).toEqual(unavailable);
    expect(errorResult(cancelled('None', 'TransactionConflict', 'None'))).toEqual(unavailable);
    expect(errorResult(new KeysLeftUnprocessed('BatchGetItem left 3 keys unprocessed after 6 tries'))).toEqual(unavailable);
  });

  it('does not take a cancelled transaction whose own condition failed for a busy table', () => {
    expect(errorResult(cancelled('ConditionalCheckFailed', 'TransactionConflict')).status).toBe(500);
  });
});
