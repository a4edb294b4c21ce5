/** Wiring for inbound processor events (POST /processor/webhook). */
import { config } from '../config';
import { processor } from '../processor';
import * as payees from '../store/payees';
import * as payments from '../store/payment-updates';
import * as transactions from '../store/transactions';
import * as webhookEndpoints from '../store/webhook-endpoints';
import type { ProcessorEventDeps } from '../use-cases/processor-events';

export const processorEventDeps: ProcessorEventDeps = {
  processor,
  transactions,
  payees,
  webhookEndpoints,
  payments,
  processorFeePercent: config.PROCESSOR_FEE_PERCENT,
};
