/** A transaction as the service writes one, for tests that arrange the table or the domain directly. */
import { randomUUID } from 'node:crypto';
import { NO_REVERSALS } from '../../lib/domain/ledger';
import { currencyCode } from '../../lib/domain/money';
import type { Transaction } from '../../lib/domain/transaction';

/** A pending USD 10.00 transaction, created (and last changed) at `createdAt`, with `overrides` applied. */
export function transactionFixture(overrides: Partial<Transaction> & Pick<Transaction, 'svcTxId' | 'partnerId' | 'clientId' | 'createdAt'>): Transaction {
  return {
    id: randomUUID(),
    partnerName: 'Partner',
    clientName: 'Merchant Ltd',
    partnerReference: `order-${randomUUID()}`,
    processorPaymentIntentId: null,
    amountMinor: 1000,
    currency: currencyCode('USD'),
    status: 'pending',
    settlementStatus: 'unsettled',
    fees: null,
    reversals: NO_REVERSALS,
    revision: 0,
    receiptEmail: null,
    statementDescriptorSuffix: null,
    meta: null,
    updatedAt: overrides.createdAt,
    ...overrides,
  };
}
