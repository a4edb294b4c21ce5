/**
 * Ledger entries as items (docs/data-model.md): a payment's entries after its sale live beside its transaction
 * (`TX#<svc_tx_id>` / `ENTRY#<key>`) and wait in the settlement index until a batch takes them; the sale is the
 * transaction item itself (its split, computed once on success). Items written before the ledger (a whole-payment
 * `ADJUSTMENT#refund|chargeback`) are read as entries too, so old data settles and reports as before.
 */
import type { LedgerEntry } from '../domain/ledger';
import { saleAmounts } from '../domain/ledger';
import { currencyCode } from '../domain/money';
import type { FeeBreakdown } from '../domain/transaction';
import { keys, type TableKey } from './keys';

/** The sale's key: it is the transaction item. */
export const SALE_KEY = 'sale';

/** A new entry's item: waiting in the settlement index, next to its payment's sale. */
export const entryItem = (entry: LedgerEntry) => ({
  ...keys.ledgerEntry(entry.svcTxId, entry.key),
  ...keys.settlementIndex(entry.partnerId, entry.clientId, entry.currency, entry.txCreatedAt, entry.svcTxId, entry.key),
  entity: 'ledgerEntry',
  ...entry,
  settlementStatus: 'unsettled',
});

/** The item an entry lives on. */
export function entryTableKey(entry: Pick<LedgerEntry, 'svcTxId' | 'key'>): TableKey {
  if (entry.key === SALE_KEY) return keys.transaction(entry.svcTxId);
  const legacy = /^adjustment#(refund|chargeback)$/.exec(entry.key);
  return legacy === null ? keys.ledgerEntry(entry.svcTxId, entry.key) : keys.adjustment(entry.svcTxId, legacy[1] as 'refund' | 'chargeback');
}

const common = (raw: Record<string, unknown>) => ({
  svcTxId: raw.svcTxId as string,
  partnerId: raw.partnerId as string,
  clientId: raw.clientId as string,
  partnerReference: raw.partnerReference as string,
  currency: currencyCode(raw.currency as string),
});

/**
 * An item as the entry it holds: a transaction's sale (`undefined` when it has no split: it has not succeeded,
 * and nothing is paid on a guess), a ledger entry, or a legacy adjustment; `undefined` for any other item.
 */
export function toEntry(raw: Record<string, unknown>): LedgerEntry | undefined {
  if (raw.entity === 'ledgerEntry') {
    return {
      ...common(raw),
      type: raw.type as LedgerEntry['type'],
      key: raw.key as string,
      cause: raw.cause as string,
      txCreatedAt: raw.txCreatedAt as string,
      createdAt: raw.createdAt as string,
      grossMinor: raw.grossMinor as number,
      processorFeeMinor: raw.processorFeeMinor as number,
      platformFeeMinor: raw.platformFeeMinor as number,
      svcEarningMinor: raw.svcEarningMinor as number,
      netMinor: raw.netMinor as number,
    };
  }
  if (raw.entity === 'transaction') {
    const fees = raw.fees as FeeBreakdown | null | undefined;
    if (fees === null || fees === undefined) return undefined;
    return {
      ...common(raw),
      type: 'transaction',
      key: SALE_KEY,
      cause: (raw.processorPaymentIntentId as string | null | undefined) ?? (raw.svcTxId as string),
      txCreatedAt: raw.createdAt as string,
      createdAt: raw.createdAt as string,
      ...saleAmounts(raw.amountMinor as number, fees),
    };
  }
  if (raw.entity === 'settlementAdjustment') {
    const kind = raw.kind as 'refund' | 'chargeback';
    return {
      ...common(raw),
      type: kind,
      key: `adjustment#${kind}`,
      cause: raw.svcTxId as string,
      // Its payment was settled before it: eligible at once, as adjustments always were.
      txCreatedAt: raw.createdAt as string,
      createdAt: raw.createdAt as string,
      grossMinor: raw.grossMinor as number,
      processorFeeMinor: raw.processorFeeMinor as number,
      platformFeeMinor: raw.platformFeeMinor as number,
      svcEarningMinor: 0,
      netMinor: raw.netAmountMinor as number,
    };
  }
  return undefined;
}
