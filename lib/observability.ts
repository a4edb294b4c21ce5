/**
 * Logger, tracer and metrics: created once per process (Lambda cold start), shared by every function.
 * Log lines are structured JSON (Powertools); the HTTP chain adds the request id to every line.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { config } from './config';

export const logger = new Logger({ serviceName: config.SERVICE_NAME, logLevel: config.LOG_LEVEL });
export const tracer = new Tracer({ serviceName: config.SERVICE_NAME });
export const metrics = new Metrics({ serviceName: config.SERVICE_NAME, namespace: 'PartnerPayments' });
