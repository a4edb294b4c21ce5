/** `POST /admin/partners`: a new partner, with its fee, statuses and (optionally) its own rate limit. */
import { type FormEvent, useState } from 'react';
import { ErrorNotice } from '../feedback';
import { useApi } from '../session';
import { useAction } from '../use-call';
import { type TermsFields, TermsInputs, termsOf } from './partner-fields';

const BLANK: TermsFields = { status: 'active', kyc_status: 'pending', service_fee_percentage: '', rate_limit_per_minute: '' };

export function PartnerCreateForm({ onCreated }: { onCreated: () => void }) {
  const api = useApi();
  const [name, setName] = useState('');
  const [terms, setTerms] = useState(BLANK);
  const create = useAction();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const partner = await create.run(() => api.createPartner({ name: name.trim(), ...termsOf(terms) }));
    if (partner === undefined) return;
    setName('');
    setTerms(BLANK);
    onCreated();
  };
  return (
    <form className="panel" aria-label="Create a partner" onSubmit={submit}>
      <h3>Create a partner</h3>
      <div className="fields">
        <label>
          Name
          <input required maxLength={200} value={name} onChange={(event) => setName(event.target.value)} />
        </label>
        <TermsInputs fields={terms} onChange={setTerms} />
      </div>
      <button type="submit" disabled={create.pending}>
        {create.pending ? 'Creating…' : 'Create partner'}
      </button>
      <ErrorNotice error={create.error} />
    </form>
  );
}
