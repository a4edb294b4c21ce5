/**
 * The composition point: the one place where the adapters of this process are chosen and wired to the use
 * cases' ports. Handlers pass these to their use case; tests build variants (to inject faults) instead of
 * reaching into the stores themselves.
 */
import { processor } from './processor';
import * as clients from './store/clients';
import * as payees from './store/payees';
import * as transactions from './store/transactions';
import type { TransactionDeps } from './use-cases/transactions';

export const transactionDeps: TransactionDeps = { processor, transactions, clients, payees };
