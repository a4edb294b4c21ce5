/**
 * A table that does not exist (DynamoDB Local restarted in memory, before its table is back): DynamoDB answers
 * ResourceNotFoundException. That is the service's dependency missing, not the caller's mistake: 503
 * SERVICE_UNAVAILABLE with `Retry-After`, and GET /health answers 503 naming the failing `dynamodb` check.
 */
import { describe, expect, it } from '@jest/globals';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { createHandler as createHealthHandler } from '../../../functions/health';
import { httpRoute } from '../../../lib/composition/http-route';
import { documentClient, dynamoClient, tableName } from '../../../lib/store/dynamo';
import { tableCheck } from '../../../lib/store/health';
import { httpEvent, lambdaContext } from '../../support/events';

const missingTable = () => `no-such-table-${randomUUID()}`;
const passes = async () => undefined;

describe('a request that meets a missing table', () => {
  it('answers 503 SERVICE_UNAVAILABLE with Retry-After and the JSON error body, not a 500', async () => {
    const route = httpRoute({ access: 'public' }, async () => {
      await documentClient.send(new GetCommand({ TableName: missingTable(), Key: { pk: 'PARTNER#p_1', sk: 'PARTNER' } }));
      return { status: 200, body: {} };
    });

    const response = await route(httpEvent({ path: '/api/v1/test/missing-table' }), lambdaContext());

    expect(response.statusCode).toBe(503);
    expect(response.headers?.['Retry-After']).toBe('1');
    expect(JSON.parse(response.body ?? '')).toEqual({ error: expect.any(String), code: 'SERVICE_UNAVAILABLE' });
  });
});

describe('GET /health with the table missing', () => {
  it('answers 503 with the dynamodb check failed (DescribeTable on the configured name), and 200 while it exists', async () => {
    const health = (name: string) => createHealthHandler({ dynamodb: tableCheck(dynamoClient, name), processor: passes });

    const gone = await health(missingTable())(httpEvent({ path: '/api/v1/health' }), lambdaContext());
    const present = await health(tableName)(httpEvent({ path: '/api/v1/health' }), lambdaContext());

    expect(gone.statusCode).toBe(503);
    expect(JSON.parse(gone.body ?? '')).toEqual({ status: 'unavailable', checks: { dynamodb: 'fail', processor: 'ok' } });
    expect(present.statusCode).toBe(200);
    expect(JSON.parse(present.body ?? '')).toEqual({ status: 'ok', checks: { dynamodb: 'ok', processor: 'ok' } });
  });
});
