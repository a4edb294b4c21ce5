/** `POST /admin/partners/{id}/webhook-endpoints`: a name, an https URL and the events to send there. */
import { type FormEvent, useState } from 'react';
import { type CreatedWebhookEndpoint, WEBHOOK_EVENTS, type WebhookEvent } from '../api-types';
import { ErrorNotice } from '../feedback';
import { useApi } from '../session';
import { useAction } from '../use-call';

interface Props {
  partnerId: string;
  onCreated: (endpoint: CreatedWebhookEndpoint) => void;
}

export function EndpointCreateForm({ partnerId, onCreated }: Props) {
  const api = useApi();
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<WebhookEvent[]>(['transaction_succeeded', 'transaction_failed']);
  const create = useAction();
  const toggle = (event: WebhookEvent, on: boolean) => setEvents((chosen) => (on ? [...chosen, event] : chosen.filter((candidate) => candidate !== event)));
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const endpoint = await create.run(() => api.createWebhookEndpoint(partnerId, { name: name.trim(), url: url.trim(), events }));
    if (endpoint === undefined) return;
    setName('');
    setUrl('');
    onCreated(endpoint);
  };
  return (
    <form className="panel" aria-label="Add a webhook endpoint" onSubmit={submit}>
      <div className="fields">
        <label>
          Name
          <input required maxLength={100} value={name} onChange={(event) => setName(event.target.value)} />
        </label>
        <label>
          URL
          <input required type="url" placeholder="https://…" value={url} onChange={(event) => setUrl(event.target.value)} />
        </label>
      </div>
      <fieldset>
        <legend>Events</legend>
        <div className="checkboxes">
          {WEBHOOK_EVENTS.map((webhookEvent) => (
            <label key={webhookEvent} className="checkbox">
              <input type="checkbox" checked={events.includes(webhookEvent)} onChange={(event) => toggle(webhookEvent, event.target.checked)} />
              {webhookEvent}
            </label>
          ))}
        </div>
      </fieldset>
      <button type="submit" disabled={create.pending || events.length === 0}>
        {create.pending ? 'Adding…' : 'Add endpoint'}
      </button>
      <ErrorNotice error={create.error} />
    </form>
  );
}
