/**
 * GET (and HEAD) /api/v1/health: 200 `{ status: "ok", checks }` while every dependency answers, else 503
 * naming the failing check (decisions.md §3), so a load balancer or `npm start`'s user sees a dead DynamoDB
 * instead of a service that answers 500 to everything.
 */
import { healthChecks } from '../lib/composition/health';
import { httpRoute } from '../lib/composition/http-route';
import { checkHealth, type HealthCheck } from '../lib/use-cases/health';
import { healthDoc } from '../lib/http/route-docs/health';

/** The handler over given checks (tests inject failing ones); `handler` checks the real dependencies. */
export const createHandler = (checks: { dynamodb: HealthCheck; processor: HealthCheck }) =>
  httpRoute({ access: 'public', doc: healthDoc }, async () => {
    const report = await checkHealth(checks);
    return { status: report.status === 'ok' ? 200 : 503, body: report, headers: { 'cache-control': 'no-store' } };
  });

export const handler = createHandler(healthChecks);
