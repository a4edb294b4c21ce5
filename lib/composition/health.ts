import { checkProcessor } from '../processor/health';
import { tableCheck } from '../store/health';

/** GET /health's probes: the table (DescribeTable only) and the processor (see `lib/processor/health.ts`). */
export const healthChecks = { dynamodb: tableCheck(), processor: checkProcessor };
