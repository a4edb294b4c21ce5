/**
 * Every partner's transactions (`GET /admin/transactions`): search by id, reference or status; a row's refunds and
 * disputes at a glance; its fees, refunded and disputed amounts in the breakdown.
 */
import { type FormEvent, useState } from 'react';
import { TRANSACTION_STATUSES, type Transaction, type TransactionFilters } from '../api-types';
import { money, when } from '../format';
import { ChoiceFilter, ListView } from '../list-view';
import { useCursor } from '../paging';
import { useApi } from '../session';
import { useLoad } from '../use-call';
import { FeeBreakdown } from './fee-breakdown';
import { reversalMarks } from './reversals';

const NO_FILTERS: Required<TransactionFilters> = { svc_tx_id: '', partner_reference: '', status: '' };

export function TransactionsSection() {
  const api = useApi();
  const [draft, setDraft] = useState(NO_FILTERS);
  const [filters, setFilters] = useState(NO_FILTERS);
  const [chosen, setChosen] = useState<Transaction | undefined>();
  const paging = useCursor();
  const page = useLoad(() => api.searchTransactions(trimmed(filters), paging.cursor), [api, filters, paging.cursor]);
  const search = (event: FormEvent) => {
    event.preventDefault();
    paging.first();
    setChosen(undefined);
    setFilters(draft);
  };
  return (
    <section aria-labelledby="transactions-title">
      <h2 id="transactions-title">Transactions</h2>
      <form className="panel picker" aria-label="Search transactions" onSubmit={search}>
        <label>
          svc_tx_id
          <input placeholder="svc_tx_…" value={draft.svc_tx_id} onChange={(event) => setDraft({ ...draft, svc_tx_id: event.target.value })} />
        </label>
        <label>
          Partner reference
          <input value={draft.partner_reference} onChange={(event) => setDraft({ ...draft, partner_reference: event.target.value })} />
        </label>
        <ChoiceFilter label="Status" value={draft.status} choices={TRANSACTION_STATUSES} onChange={(status) => setDraft({ ...draft, status })} />
        <button type="submit">Search</button>
      </form>
      {chosen !== undefined && <FeeBreakdown transaction={chosen} onClose={() => setChosen(undefined)} />}
      <ListView
        load={page}
        label="Transactions"
        empty="No transactions match."
        headers={['svc_tx_id', 'Partner', 'Merchant', 'Reference', 'Amount', 'Status', 'Refunds & disputes', 'Settlement', 'Created', 'Actions']}
        paging={paging}
        row={(transaction) => (
          <tr key={transaction.svcTxId}>
            <td>
              <code>{transaction.svcTxId}</code>
            </td>
            <td>{transaction.partnerName}</td>
            <td>{transaction.clientName}</td>
            <td>{transaction.partnerReference}</td>
            <td>{money(transaction.amount, transaction.currency)}</td>
            <td>{transaction.status}</td>
            <td>
              {reversalMarks(transaction).map((mark) => (
                <span key={mark} className="badge reversal">
                  {mark}
                </span>
              ))}
            </td>
            <td>{transaction.settlementStatus}</td>
            <td>{when(transaction.createdAt)}</td>
            <td className="actions">
              <button type="button" className="secondary" onClick={() => setChosen(transaction)}>
                Fees
              </button>
            </td>
          </tr>
        )}
      />
    </section>
  );
}

/** The filters the admin filled in, without the empty ones (an empty query value is a validation error). */
const trimmed = (filters: Required<TransactionFilters>): TransactionFilters => ({
  svc_tx_id: filters.svc_tx_id.trim(),
  partner_reference: filters.partner_reference.trim(),
  status: filters.status,
});
