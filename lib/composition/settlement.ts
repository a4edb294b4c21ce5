/** Settlement: the settlement store, the audit log, the payout rails (HTTP; locally the sandbox rails), the cutoff of decisions.md §1. */
import { config } from '../config';
import { rails } from '../payouts';
import * as audit from '../store/audit-events';
import { owedMinor } from '../store/balances';
import * as partners from '../store/partners';
import * as payees from '../store/payees';
import { listWaiting } from '../store/settlement-waiting';
import * as settlements from '../store/settlements';
import { settlementContinuations } from './settlement-continuations';
import type { SettlementDeps } from '../use-cases/settlements';

export const settlementDeps: SettlementDeps = {
  settlements: { ...settlements, listWaiting, owedMinor },
  partners,
  payees,
  audit,
  rails,
  continuations: settlementContinuations,
  cutoff: config.SETTLEMENT_CUTOFF,
  groupLeaseMs: config.SETTLEMENT_GROUP_LEASE_SECONDS * 1000,
  now: () => new Date(),
};
