/**
 * One settlement batch in full: the payments whose sales it pays (`transactionIds`) and its adjustments, the other
 * ledger entries settled with it (decisions.md §5a), each labelled by its type.
 */
import type { EntryType, SettlementBatch } from '../api-types';
import { Empty } from '../feedback';
import { money, when } from '../format';

/** Every adjustment type the service has (a new one fails the console's typecheck until it is named here). */
export const ADJUSTMENT_LABELS: Record<EntryType, string> = {
  transaction: 'Sale (settled beside its reversals)',
  refund: 'Refund',
  chargeback: 'Chargeback (dispute)',
  dispute_fee: 'Dispute fee',
  dispute_reinstated: 'Dispute reinstated',
};

/** The label of an adjustment's type; a type this build does not know (a newer service) shows as the API says it. */
export const adjustmentLabel = (type: string) => (ADJUSTMENT_LABELS as Record<string, string | undefined>)[type] ?? type;

export function BatchDetails({ batch, onClose }: { batch: SettlementBatch; onClose: () => void }) {
  const { currency } = batch;
  return (
    <div className="panel" role="region" aria-label={`Batch ${batch.id}`}>
      <h3>
        Batch <code>{batch.id}</code> to {batch.clientId} ({batch.status})
      </h3>
      <dl className="breakdown">
        <div>
          <dt>Gross</dt>
          <dd>{money(batch.totalGross, currency)}</dd>
        </div>
        <div>
          <dt>Fees</dt>
          <dd>{money(batch.totalProcessorFees + batch.totalPlatformFees, currency)}</dd>
        </div>
        <div>
          <dt>Net paid</dt>
          <dd>{money(batch.totalNet, currency)}</dd>
        </div>
      </dl>
      <h4>Payments ({batch.transactionIds.length})</h4>
      {batch.transactionIds.length === 0 ? (
        <Empty>No sale of its own: only adjustments.</Empty>
      ) : (
        <ul className="ids">
          {batch.transactionIds.map((svcTxId) => (
            <li key={svcTxId}>
              <code>{svcTxId}</code>
            </li>
          ))}
        </ul>
      )}
      <h4>Adjustments ({batch.adjustments.length})</h4>
      {batch.adjustments.length === 0 ? (
        <Empty>No adjustments.</Empty>
      ) : (
        <table aria-label="Adjustments">
          <thead>
            <tr>
              {['Type', 'svc_tx_id', 'Gross', 'Processor fee', 'Platform fee', 'Net', 'Recorded'].map((header) => (
                <th key={header}>{header}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {batch.adjustments.map((adjustment, index) => (
              <tr key={`${adjustment.svcTxId}-${adjustment.type}-${index}`}>
                <td>
                  {adjustmentLabel(adjustment.type)} <code className="type">{adjustment.type}</code>
                </td>
                <td>
                  <code>{adjustment.svcTxId}</code>
                </td>
                <td>{money(adjustment.gross, currency)}</td>
                <td>{money(adjustment.processorFee, currency)}</td>
                <td>{money(adjustment.platformFee, currency)}</td>
                <td className={adjustment.net < 0 ? 'negative' : undefined}>{money(adjustment.net, currency)}</td>
                <td>{when(adjustment.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <button type="button" className="secondary" onClick={onClose}>
        Close
      </button>
    </div>
  );
}

