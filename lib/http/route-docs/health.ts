/**
 * The API reference's "Health" section (`functions/health`).
 */
import { HealthReport } from '../response-schemas';
import type { RouteDoc } from '../route-doc';

export const healthDoc: RouteDoc = {
  summary: 'Check the service and its dependencies',
  description: 'Answers 200 while DynamoDB and the card processor both answer, else 503 naming the failing check. Never cached.',
  tag: 'Health',
  responses: {
    200: { description: 'Every dependency answers', schema: HealthReport },
    503: { description: 'A dependency does not answer: its check is `fail`', schema: HealthReport },
  },
};
