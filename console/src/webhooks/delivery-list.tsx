/** The partner's webhook deliveries, newest first, filtered by status; any one can be sent again. */
import { useState } from 'react';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../api-types';
import { ErrorNotice } from '../feedback';
import { when } from '../format';
import { ChoiceFilter, ListView } from '../list-view';
import { useCursor } from '../paging';
import { useApi } from '../session';
import { useAction, useLoad } from '../use-call';

export function DeliveryList({ partnerId }: { partnerId: string }) {
  const api = useApi();
  const [status, setStatus] = useState<DeliveryStatus | ''>('');
  const paging = useCursor();
  const page = useLoad(() => api.listDeliveries(partnerId, status, paging.cursor), [api, partnerId, status, paging.cursor]);
  const resend = useAction();
  const resendDelivery = async (deliveryId: string) => {
    if ((await resend.run(() => api.resendDelivery(deliveryId))) !== undefined) page.reload();
  };
  return (
    <>
      <h3>Deliveries</h3>
      <div className="buttons">
        <ChoiceFilter
          label="Status"
          value={status}
          choices={DELIVERY_STATUSES}
          onChange={(value) => {
            paging.first();
            setStatus(value);
          }}
        />
      </div>
      <ErrorNotice error={resend.error} />
      <ListView
        load={page}
        label="Webhook deliveries"
        empty="No deliveries."
        headers={['Event', 'Transaction', 'Status', 'Attempts', 'Last answer', 'Created', 'Actions']}
        paging={paging}
        row={(delivery) => (
          <tr key={delivery.id}>
            <td>{delivery.event}</td>
            <td>
              <code>{delivery.svc_tx_id}</code>
            </td>
            <td>{delivery.status}</td>
            <td>{delivery.attempts}</td>
            <td>{delivery.last_error ?? delivery.last_http_status ?? '—'}</td>
            <td>{when(delivery.created_at)}</td>
            <td className="actions">
              <button type="button" className="secondary" disabled={resend.pending} onClick={() => resendDelivery(delivery.id)}>
                Resend
              </button>
            </td>
          </tr>
        )}
      />
    </>
  );
}
