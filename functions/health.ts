/**
 * GET (and HEAD) /api/v1/health: 200 `{ status: "ok", checks }` while every dependency answers, else 503
 * naming the failing check (decisions.md §3), so a load balancer or `npm start`'s user sees a dead DynamoDB
 * instead of a service that answers 500 to everything.
 */
import { healthChecks } from '../lib/adapters/health';
import { httpRoute } from '../lib/adapters/http-route';
import { HealthReport } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { checkHealth, type HealthCheck } from '../lib/use-cases/health';

const doc: RouteDoc = {
  summary: 'Check the service and its dependencies',
  description: 'Answers 200 while DynamoDB and the card processor both answer, else 503 naming the failing check. Never cached.',
  tag: 'Health',
  responses: {
    200: { description: 'Every dependency answers', schema: HealthReport },
    503: { description: 'A dependency does not answer: its check is `fail`', schema: HealthReport },
  },
};

/** The handler over given checks (tests inject failing ones); `handler` checks the real dependencies. */
export const createHandler = (checks: { dynamodb: HealthCheck; processor: HealthCheck }) =>
  httpRoute({ access: 'public', doc }, async () => {
    const report = await checkHealth(checks);
    return { status: report.status === 'ok' ? 200 : 503, body: report, headers: { 'cache-control': 'no-store' } };
  });

export const handler = createHandler(healthChecks);
