/**
 * `PATCH /admin/partners/{partner_id}`: the terms always, the branding only when one of its fields was touched (the
 * API replaces the whole branding, and shows the partner's name as the display name when none is set).
 */
import { type FormEvent, useState } from 'react';
import type { BrandingInput, Partner, PartnerChanges } from '../api-types';
import { ErrorNotice } from '../feedback';
import { useApi } from '../session';
import { useAction } from '../use-call';
import { type TermsFields, TermsInputs, termsOf } from './partner-fields';

const orNull = (value: string) => (value.trim() === '' ? null : value.trim());

interface Props {
  partner: Partner;
  onSaved: () => void;
  onCancel: () => void;
}

export function PartnerEditor({ partner, onSaved, onCancel }: Props) {
  const api = useApi();
  const [terms, setTerms] = useState<TermsFields>({
    status: partner.status,
    kyc_status: partner.kyc_status,
    service_fee_percentage: String(partner.service_fee_percentage),
    rate_limit_per_minute: partner.rate_limit_per_minute === null ? '' : String(partner.rate_limit_per_minute),
  });
  const [branding, setBranding] = useState({
    display_name: partner.branding.display_name,
    logo_url: partner.branding.logo_url ?? '',
    brand_color: partner.branding.brand_color ?? '',
  });
  const [brandingTouched, setBrandingTouched] = useState(false);
  const save = useAction();
  const setBrand = (name: keyof typeof branding, value: string) => {
    setBranding({ ...branding, [name]: value });
    setBrandingTouched(true);
  };
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const brandingInput: BrandingInput = { display_name: orNull(branding.display_name), logo_url: orNull(branding.logo_url), brand_color: orNull(branding.brand_color) };
    const changes: PartnerChanges = { ...termsOf(terms), ...(brandingTouched ? { branding: brandingInput } : {}) };
    if ((await save.run(() => api.updatePartner(partner.partner_id, changes))) !== undefined) onSaved();
  };
  return (
    <form className="panel" aria-label={`Edit ${partner.name}`} onSubmit={submit}>
      <h3>
        Edit {partner.name} <code>{partner.partner_id}</code>
      </h3>
      <div className="fields">
        <TermsInputs fields={terms} onChange={setTerms} />
      </div>
      <fieldset>
        <legend>Checkout branding</legend>
        <div className="fields">
          <label>
            Display name
            <input maxLength={100} value={branding.display_name} onChange={(event) => setBrand('display_name', event.target.value)} />
          </label>
          <label>
            Logo URL
            <input type="url" placeholder="https://…" value={branding.logo_url} onChange={(event) => setBrand('logo_url', event.target.value)} />
          </label>
          <label>
            Brand colour
            <input pattern="#[0-9a-fA-F]{6}" placeholder="#1a2b3c" value={branding.brand_color} onChange={(event) => setBrand('brand_color', event.target.value)} />
          </label>
        </div>
      </fieldset>
      <div className="buttons">
        <button type="submit" disabled={save.pending}>
          {save.pending ? 'Saving…' : 'Save changes'}
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
      <ErrorNotice error={save.error} />
    </form>
  );
}
