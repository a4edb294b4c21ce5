/**
 * Wiring for the transaction use cases that never call the processor (initialize, get, list): the stores only,
 * so these functions' bundles carry no processor SDK. `transactions.ts` adds the processor for the others.
 */
import * as clients from '../store/clients';
import * as payees from '../store/payees';
import * as transactions from '../store/transactions';
import type { TransactionStoreDeps } from '../use-cases/transactions';

export const transactionStoreDeps: TransactionStoreDeps = { transactions, clients, payees };
