/** The error mapper on a missing table: DynamoDB's ResourceNotFoundException is a dependency unavailable (503). */
import { describe, expect, it } from '@jest/globals';
import { ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { errorResult } from '../../lib/http/response';

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
});
