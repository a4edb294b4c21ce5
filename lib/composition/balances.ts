/** Balances: the settlement index summed per merchant and currency, and the partners (an admin names one). */
import * as balances from '../store/balances';
import * as partners from '../store/partners';
import type { BalanceDeps } from '../use-cases/balances';

export const balanceDeps: BalanceDeps = { balances, partners };
