/**
 * How a payment splits: the processor's fee, the platform's, the partner's payout and the merchant's net; and what
 * was refunded or disputed since (the dispute's status only when there is one).
 */
import type { Transaction } from '../api-types';
import { money, percent } from '../format';
import { wasDisputed, wasRefunded } from './reversals';

export function FeeBreakdown({ transaction, onClose }: { transaction: Transaction; onClose: () => void }) {
  const { currency } = transaction;
  const rows: Array<[string, string]> = [
    ['Amount', money(transaction.amount, currency)],
    ['Processor fee', `${money(transaction.processorFee, currency)} (${percent(transaction.processorFeePercent)})`],
    ['Platform fee', `${money(transaction.platformFee, currency)} (partner fee ${percent(transaction.partnerFeePercent)})`],
    ['Service earning', `${money(transaction.svcEarningAmount, currency)} (${percent(transaction.svcEarningPercent)})`],
    ['Partner payout share', percent(transaction.partnerPayoutPercent)],
    ['Net to the merchant', money(transaction.netAmount, currency)],
    ['Refunded', money(transaction.refundedAmount, currency)],
    ['Disputed', money(transaction.disputedAmount, currency)],
  ];
  if (transaction.disputeStatus !== null) rows.push(['Dispute status', transaction.disputeStatus]);
  return (
    <div className="panel" role="region" aria-label="Fee breakdown">
      <h3>
        Fees of <code>{transaction.svcTxId}</code>
      </h3>
      {transaction.netAmount === null && <p className="hint">Fees are set when the payment succeeds.</p>}
      {(wasRefunded(transaction) || wasDisputed(transaction)) && (
        <p className="hint">Settlement reverses the refunded and disputed part of the net from the merchant's payouts (see Balances).</p>
      )}
      <dl className="breakdown">
        {rows.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <button type="button" className="secondary" onClick={onClose}>
        Close
      </button>
    </div>
  );
}
