/**
 * Wiring of the one path a payment's outcome takes (`applyPaymentEvent`): the processor webhook, attach-intent and the
 * reconciliation each apply what they learn through it, over the same stores.
 */
import { config } from '../config';
import * as payees from '../store/payees';
import * as payments from '../store/payment-updates';
import * as transactions from '../store/transactions';
import * as webhookEndpoints from '../store/webhook-endpoints';
import type { PaymentEventDeps } from '../use-cases/processor-events';

export const paymentEventDeps: PaymentEventDeps = {
  transactions,
  payees,
  webhookEndpoints,
  payments,
  processorFeePercent: config.PROCESSOR_FEE_PERCENT,
};
