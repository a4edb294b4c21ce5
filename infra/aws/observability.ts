/**
 * What the functions' logs and metrics are named by, and what the alarms look for: one place, so an alarm on an
 * EMF metric names the namespace and `service` dimension that `lib/observability.ts` emits.
 */

/** Powertools' service name (`SERVICE_NAME`, lib/config.ts): the `service` dimension of every EMF metric. */
export const SERVICE_NAME = 'partner-payments';

/** The namespace of the service's EMF metrics: the functions' own constant (lib/metrics-namespace.ts), not a copy. */
export { METRICS_NAMESPACE } from '../../lib/metrics-namespace';

/** The Powertools settings every function gets (`service-function.ts` sets them): its service name and log level. */
export const powertoolsEnvironment: Record<string, string> = { SERVICE_NAME, LOG_LEVEL: 'INFO' };
