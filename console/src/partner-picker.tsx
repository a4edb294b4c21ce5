/** Chooses the partner a section shows (its keys, its webhooks): from the newest 200 partners, or by its id typed in. */
import { type FormEvent, useState } from 'react';
import { ErrorNotice, Loading } from './feedback';
import { useApi } from './session';
import { useLoad } from './use-call';

export function PartnerPicker({ partnerId, onChoose }: { partnerId: string | undefined; onChoose: (partnerId: string) => void }) {
  const api = useApi();
  const partners = useLoad(() => api.listPartners(undefined, 200), [api]);
  const [typed, setTyped] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (typed.trim() !== '') onChoose(typed.trim());
  };
  if (partners.state === 'loading') return <Loading what="partners" />;
  if (partners.state === 'failed') return <ErrorNotice error={partners.error} />;
  return (
    <form className="panel picker" onSubmit={submit}>
      <label>
        Partner
        <select value={partnerId ?? ''} onChange={(event) => event.target.value !== '' && onChoose(event.target.value)}>
          <option value="">Choose a partner…</option>
          {partnerId !== undefined && !partners.data.items.some((partner) => partner.partner_id === partnerId) && <option value={partnerId}>{partnerId}</option>}
          {partners.data.items.map((partner) => (
            <option key={partner.partner_id} value={partner.partner_id}>
              {partner.name} ({partner.partner_id})
            </option>
          ))}
        </select>
      </label>
      <label>
        or its id
        <input placeholder="ptr_…" value={typed} onChange={(event) => setTyped(event.target.value)} />
      </label>
      <button type="submit" className="secondary">
        Show
      </button>
    </form>
  );
}
