/** The partner's webhook endpoints (at most 20, no paging), a form to add one, and Delete after a confirmation. */
import { useState } from 'react';
import type { CreatedWebhookEndpoint, WebhookEndpoint } from '../api-types';
import { ErrorNotice } from '../feedback';
import { when } from '../format';
import { ListView } from '../list-view';
import { Secret } from '../secret';
import { useApi } from '../session';
import { type Load, useAction } from '../use-call';
import { EndpointCreateForm } from './endpoint-create-form';

interface Props {
  partnerId: string;
  /** `GET /admin/partners/{id}/webhook-endpoints`, read by the section (the deliveries name their endpoints too). */
  endpoints: Load<{ items: WebhookEndpoint[] }> & { reload: () => void };
}

export function EndpointList({ partnerId, endpoints }: Props) {
  const api = useApi();
  const [created, setCreated] = useState<CreatedWebhookEndpoint | undefined>();
  const remove = useAction();
  const deleteEndpoint = async (endpoint: WebhookEndpoint) => {
    if (!window.confirm(`Delete the endpoint "${endpoint.name}"? Its pending deliveries fail and cannot be resent.`)) return;
    const done = await remove.run(async () => {
      await api.deleteWebhookEndpoint(partnerId, endpoint.id);
      return true;
    });
    if (done === true) endpoints.reload();
  };
  return (
    <>
      <h3>Endpoints</h3>
      <EndpointCreateForm
        partnerId={partnerId}
        onCreated={(endpoint) => {
          setCreated(endpoint);
          endpoints.reload();
        }}
      />
      {created !== undefined && (
        <div className="panel issued" role="region" aria-label="New webhook endpoint">
          <h3>
            New endpoint <code>{created.id}</code>
          </h3>
          <p className="warning">
            <strong>Shown only now.</strong> The partner verifies each delivery's signature with this secret; the
            service cannot show it again.
          </p>
          <Secret label="Signing secret" value={created.secret} />
          <button type="button" className="secondary" onClick={() => setCreated(undefined)}>
            I have copied it
          </button>
        </div>
      )}
      <ErrorNotice error={remove.error} />
      <ListView
        load={endpoints}
        label="Webhook endpoints"
        empty="This partner has no webhook endpoints."
        headers={['Name', 'URL', 'Events', 'Circuit', 'Created', 'Actions']}
        row={(endpoint) => (
          <tr key={endpoint.id}>
            <td>{endpoint.name}</td>
            <td>
              <code>{endpoint.url}</code>
            </td>
            <td>{endpoint.events.join(', ')}</td>
            <td title="closed: deliveries go out freely; slow: two at a time (it answers in 1 s or more); probing: one attempt at a time; open: none until the time shown (the endpoint timed out)">
              {endpoint.circuit.state}
              {endpoint.circuit.open_until !== null && ` until ${when(endpoint.circuit.open_until)}`}
            </td>
            <td>{when(endpoint.created_at)}</td>
            <td className="actions">
              <button type="button" className="danger" disabled={remove.pending} onClick={() => deleteEndpoint(endpoint)}>
                Delete
              </button>
            </td>
          </tr>
        )}
      />
    </>
  );
}
