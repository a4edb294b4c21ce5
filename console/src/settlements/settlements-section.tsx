/**
 * Every partner's settlement batches: run settlement (all partners, or one), pay a batch over its rail, download a
 * batch's reconciliation report (CSV), and show a batch's payments and adjustments (each labelled by its type).
 */
import { type FormEvent, useState } from 'react';
import { BATCH_STATUSES, type BatchStatus, type SettlementBatch } from '../api-types';
import { ErrorNotice } from '../feedback';
import { money, when } from '../format';
import { ChoiceFilter, ListView } from '../list-view';
import { useCursor } from '../paging';
import { useApi } from '../session';
import { useAction, useLoad } from '../use-call';
import { BatchDetails } from './batch-details';

export function SettlementsSection() {
  const api = useApi();
  const [status, setStatus] = useState<BatchStatus | ''>('');
  const paging = useCursor();
  const page = useLoad(() => api.listSettlements(status, paging.cursor), [api, status, paging.cursor]);
  const action = useAction();
  const [notice, setNotice] = useState<string | undefined>();
  const [runPartnerId, setRunPartnerId] = useState('');
  /** The batch whose details show: looked up in the page shown, so a reload (after a pay) shows it as it is now. */
  const [chosenId, setChosenId] = useState<string | undefined>();
  const chosen = page.state === 'done' ? page.data.items.find((batch) => batch.id === chosenId) : undefined;

  const runSettlement = async (event: FormEvent) => {
    event.preventDefault();
    const run = await action.run(() => api.runSettlement(runPartnerId.trim()));
    if (run === undefined) return;
    const made = run.created_batches === 0 ? 'Nothing was eligible: no batch created.' : `${run.created_batches} batch(es) created.`;
    setNotice(run.continuing ? `${made} The run goes on in the background: more batches will appear.` : made);
    paging.first();
    page.reload();
  };
  const pay = async (batch: SettlementBatch) => {
    if (!window.confirm(`Pay ${money(batch.totalNet, batch.currency)} to ${batch.clientId}?`)) return;
    const paid = await action.run(() => api.paySettlement(batch.id));
    if (paid === undefined) return;
    setNotice(`Batch ${paid.id} paid (${paid.railATransferId ?? paid.railBTransferId ?? 'no transfer id'}).`);
    page.reload();
  };
  const download = async (batch: SettlementBatch) => {
    const csv = await action.run(() => api.settlementReport(batch.id));
    if (csv !== undefined) saveFile(`settlement-${batch.id}.csv`, csv);
  };

  return (
    <section aria-labelledby="settlements-title">
      <h2 id="settlements-title">Settlements</h2>
      <form className="panel picker" aria-label="Run settlement" onSubmit={runSettlement}>
        <label>
          Partner id (empty: every partner)
          <input placeholder="ptr_…" value={runPartnerId} onChange={(event) => setRunPartnerId(event.target.value)} />
        </label>
        <button type="submit" disabled={action.pending}>
          Run settlement
        </button>
      </form>
      {notice !== undefined && <p role="status">{notice}</p>}
      <ErrorNotice error={action.error} />
      <div className="buttons">
        <ChoiceFilter
          label="Status"
          value={status}
          choices={BATCH_STATUSES}
          onChange={(value) => {
            paging.first();
            setStatus(value);
          }}
        />
      </div>
      {chosen !== undefined && <BatchDetails batch={chosen} onClose={() => setChosenId(undefined)} />}
      <ListView
        load={page}
        label="Settlement batches"
        empty="No settlement batches."
        headers={['Batch', 'Partner', 'Merchant', 'Payments', 'Adjustments', 'Gross', 'Fees', 'Net', 'Status', 'Created', 'Actions']}
        paging={paging}
        row={(batch) => (
          <tr key={batch.id}>
            <td>
              <code>{batch.id}</code>
            </td>
            <td>
              <code>{batch.partnerId}</code>
            </td>
            <td>{batch.clientId}</td>
            <td>{batch.transactionIds.length}</td>
            <td>{batch.adjustments.length}</td>
            <td>{money(batch.totalGross, batch.currency)}</td>
            <td>{money(batch.totalProcessorFees + batch.totalPlatformFees, batch.currency)}</td>
            <td>{money(batch.totalNet, batch.currency)}</td>
            <td title={batch.failureReason ?? undefined}>{batch.status}</td>
            <td>{when(batch.createdAt)}</td>
            <td className="actions">
              {batch.status !== 'sent' && (
                <button type="button" disabled={action.pending} onClick={() => pay(batch)}>
                  Pay
                </button>
              )}
              <button type="button" className="secondary" disabled={action.pending} onClick={() => download(batch)}>
                CSV
              </button>
              <button type="button" className="secondary" onClick={() => setChosenId(batch.id)}>
                Details
              </button>
            </td>
          </tr>
        )}
      />
    </section>
  );
}

/** Hands text to the browser as a download (the report needs the bearer token, so no plain link can fetch it). */
function saveFile(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  URL.revokeObjectURL(url);
}
