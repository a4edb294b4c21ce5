/**
 * The composition point: the one place (this directory) where the adapters of this process are chosen and
 * wired to the use cases' ports, one module per use case. Handlers import the module of their use case
 * (`lib/composition/transactions`, `lib/composition/settlement`, ...), never this index: it wires every adapter, so
 * a function importing it would bundle every adapter's dependencies (the processor SDK included). Tests build
 * variants (to inject faults) instead of reaching into the stores themselves, and may take them from here.
 */
export { balanceDeps } from './balances';
export { brandingDeps } from './branding';
export { clientStore } from './clients';
export { healthChecks } from './health';
export { deliveryQueue, outboxDeps } from './outbox';
export { partnerDeps } from './partners';
export { paymentEventDeps } from './payment-events';
export { processorEventDeps } from './processor-events';
export { reconciliationDeps, reconciliationLimits } from './reconciliation';
export { settlementDeps } from './settlement';
export { transactionStoreDeps } from './transaction-store';
export { transactionDeps } from './transactions';
export { deliveryAdminDeps } from './webhook-delivery-admin';
export { webhookDeliveryDeps } from './webhook-deliveries';
export { webhookEndpointDeps } from './webhook-endpoints';
