/**
 * The partner's webhook deliveries, newest first, filtered by status: each one's endpoint, attempts, last answer
 * and last error. While any shown delivery is still pending the list reads itself again, so attempts and the
 * outcome appear as they happen. Any delivery can be sent again: the new delivery (same event id) is then shown
 * at the top of the unfiltered list.
 */
import { useState } from 'react';
import { DELIVERY_STATUSES, type DeliveryStatus, type WebhookDelivery, type WebhookEndpoint } from '../api-types';
import { ErrorNotice } from '../feedback';
import { when } from '../format';
import { ChoiceFilter, ListView } from '../list-view';
import { useCursor } from '../paging';
import { useApi } from '../session';
import { useAction } from '../use-call';
import { useSettlingLoad } from './use-settling-load';

interface Props {
  partnerId: string;
  /** The partner's endpoints, to name each delivery's; a deleted endpoint is shown by its id. */
  endpoints: readonly WebhookEndpoint[];
}

export function DeliveryList({ partnerId, endpoints }: Props) {
  const api = useApi();
  const [status, setStatus] = useState<DeliveryStatus | ''>('');
  const paging = useCursor();
  const page = useSettlingLoad(
    () => api.listDeliveries(partnerId, status, paging.cursor),
    [api, partnerId, status, paging.cursor],
    (data) => data.items.some((delivery) => delivery.status === 'pending'),
  );
  const resend = useAction();
  const [resent, setResent] = useState<WebhookDelivery | undefined>();
  const resendDelivery = async (deliveryId: string) => {
    const delivery = await resend.run(() => api.resendDelivery(deliveryId));
    if (delivery === undefined) return;
    setResent(delivery);
    // The new delivery is the newest, and pending: show it, whatever the filter and page were.
    setStatus('');
    paging.first();
    page.reload();
  };
  const endpointOf = (endpointId: string) => endpoints.find((endpoint) => endpoint.id === endpointId);
  return (
    <section aria-labelledby="deliveries-title">
      <h3 id="deliveries-title">Deliveries</h3>
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
        <button type="button" className="secondary" onClick={page.reload}>
          Refresh
        </button>
      </div>
      {resent !== undefined && (
        <p role="status">
          Resent as a new delivery <code>{resent.id}</code> of event <code>{resent.event_id}</code>.
        </p>
      )}
      <ErrorNotice error={resend.error} />
      <ListView
        load={page}
        label="Webhook deliveries"
        empty={status === '' ? 'No deliveries.' : `No ${status} deliveries.`}
        headers={['Delivery', 'Event', 'Transaction', 'Endpoint', 'Status', 'Attempts', 'Last answer', 'Last error', 'Created', 'Actions']}
        paging={paging}
        row={(delivery) => {
          const endpoint = endpointOf(delivery.endpoint_id);
          return (
            <tr key={delivery.id}>
              <td>
                <code>{delivery.id}</code>
              </td>
              <td>{delivery.event}</td>
              <td>
                <code>{delivery.svc_tx_id}</code>
              </td>
              <td title={endpoint?.url}>{endpoint?.name ?? <code>{delivery.endpoint_id}</code>}</td>
              <td>{delivery.status}</td>
              <td>{delivery.attempts}</td>
              <td>{delivery.last_http_status ?? '—'}</td>
              <td>{delivery.last_error ?? '—'}</td>
              <td>{when(delivery.created_at)}</td>
              <td className="actions">
                <button type="button" className="secondary" disabled={resend.pending} onClick={() => resendDelivery(delivery.id)}>
                  Resend
                </button>
              </td>
            </tr>
          );
        }}
      />
    </section>
  );
}
