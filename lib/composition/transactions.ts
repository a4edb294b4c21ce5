/** Wiring for the transaction use cases that call the processor (checkout intent, attach intent). */
import { processor } from '../processor';
import type { TransactionDeps } from '../use-cases/transactions';
import { paymentEventDeps } from './payment-events';
import { transactionStoreDeps } from './transaction-store';

export const transactionDeps: TransactionDeps = { ...transactionStoreDeps, processor, paymentEvents: paymentEventDeps };
