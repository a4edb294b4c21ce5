/**
 * The composition point: the one place where the adapters of this process are chosen and wired to the use
 * cases' ports. Handlers pass these to their use case; tests build variants (to inject faults) instead of
 * reaching into the stores themselves.
 */
import { config } from './config';
import { processor } from './processor';
import { checkProcessor } from './processor/health';
import * as clients from './store/clients';
import { SECRET_PURPOSE, secretBox } from './secrets';
import * as deliveries from './store/deliveries';
import { tableCheck } from './store/health';
import * as outbox from './store/outbox';
import * as partners from './store/partners';
import * as payees from './store/payees';
import * as settlements from './store/settlements';
import * as moves from './store/transaction-moves';
import * as transactions from './store/transactions';
import * as webhookEndpoints from './store/webhook-endpoints';
import { rails } from './payouts';
import type { ProcessorEventDeps } from './use-cases/processor-events';
import type { SettlementDeps } from './use-cases/settlements';
import type { TransactionDeps } from './use-cases/transactions';
import type { WebhookDeliveryDeps } from './use-cases/webhook-deliveries';
import type { WebhookEndpointDeps } from './use-cases/webhook-endpoints';
import type { OutboxDeps } from './use-cases/webhook-outbox';
import { createHttpSender } from './webhooks/http-sender';
import { deliveryQueue } from './webhooks/sqs-queue';
import { systemResolver, type UrlPolicy } from './webhooks/url-safety';

export const transactionDeps: TransactionDeps = { processor, transactions, clients, payees };

export const processorEventDeps: ProcessorEventDeps = {
  processor,
  transactions,
  payees,
  webhookEndpoints,
  moves,
  processorFeePercent: config.PROCESSOR_FEE_PERCENT,
};

/** Settlement: the settlement store, the payout rails (HTTP; locally the sandbox rails), the cutoff of decisions.md §1. */
export const settlementDeps: SettlementDeps = {
  settlements,
  partners,
  payees,
  rails,
  cutoff: config.SETTLEMENT_CUTOFF,
  now: () => new Date(),
};

/** The partner webhook delivery queue: SQS in AWS, the local runtime's queue (through its SQS front) locally. */
export { deliveryQueue };
export const outboxDeps: OutboxDeps = { outbox, deliveryQueue };

/** Where partner webhooks may go: https and public addresses only, unless ALLOW_INSECURE_WEBHOOK_URLS (decisions.md §8). */
const webhookUrlPolicy: UrlPolicy = { allowInsecure: config.ALLOW_INSECURE_WEBHOOK_URLS };

export const webhookEndpointDeps: WebhookEndpointDeps = { urlPolicy: webhookUrlPolicy, resolve: systemResolver };

/** The delivery consumer's adapters: real HTTP (10 s timeout, URL re-checked, addresses pinned), the queue for retries. */
export const webhookDeliveryDeps: WebhookDeliveryDeps = {
  deliveries,
  endpoints: webhookEndpoints,
  openSecret: (sealed) => secretBox.open(sealed, SECRET_PURPOSE.webhook),
  queue: deliveryQueue,
  send: createHttpSender({ policy: webhookUrlPolicy }),
  retryBaseMs: config.WEBHOOK_RETRY_BASE_MS,
  now: Date.now,
  random: Math.random,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** GET /health's probes: the table (DescribeTable only) and the processor (see `lib/processor/health.ts`). */
export const healthChecks = { dynamodb: tableCheck(), processor: checkProcessor };
