/**
 * The CloudWatch namespace of the service's embedded metrics, in a module of its own with no imports and no side
 * effects: the functions emit in it (`lib/observability.ts`) and the CDK app's alarms read from it
 * (`infra/aws/observability.ts`), which must not load `lib/observability.ts` (it parses the environment and
 * creates the logger, tracer and metrics as it loads).
 */
export const METRICS_NAMESPACE = 'PartnerPayments';
