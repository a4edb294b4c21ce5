import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { ChainContext } from '../../lib/http/types';

/** An API Gateway HTTP API (payload 2.0) event, as AWS sends it. */
export function httpEvent(overrides: {
  method?: string;
  path?: string;
  body?: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  pathParameters?: Record<string, string>;
  isBase64Encoded?: boolean;
}): APIGatewayProxyEventV2 {
  const method = overrides.method ?? 'GET';
  const path = overrides.path ?? '/api/v1/test';
  return {
    version: '2.0',
    routeKey: `${method} ${path}`,
    rawPath: path,
    rawQueryString: new URLSearchParams(overrides.query ?? {}).toString(),
    headers: overrides.headers ?? {},
    ...(overrides.query ? { queryStringParameters: overrides.query } : {}),
    ...(overrides.pathParameters ? { pathParameters: overrides.pathParameters } : {}),
    requestContext: {
      accountId: 'test',
      apiId: 'test',
      domainName: 'test',
      domainPrefix: 'test',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'jest' },
      requestId: 'req-test-1',
      routeKey: `${method} ${path}`,
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    ...(overrides.body === undefined ? {} : { body: overrides.body }),
    isBase64Encoded: overrides.isBase64Encoded ?? false,
  };
}

export function lambdaContext(): ChainContext {
  const context: Context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:test',
    memoryLimitInMB: '256',
    awsRequestId: 'aws-req-1',
    logGroupName: '/aws/lambda/test',
    logStreamName: 'test',
    getRemainingTimeInMillis: () => 30_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
  return context as ChainContext;
}
