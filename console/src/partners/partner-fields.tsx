/** The fields a partner's create and edit forms share, and their conversions from what a form holds. */
import type { KycStatus, PartnerStatus } from '../api-types';

export interface TermsFields {
  status: PartnerStatus;
  kyc_status: KycStatus;
  service_fee_percentage: string;
  /** Empty: the service's default. */
  rate_limit_per_minute: string;
}

/** The terms as the API takes them (`null` rate limit: the default). */
export const termsOf = (fields: TermsFields) => ({
  status: fields.status,
  kyc_status: fields.kyc_status,
  service_fee_percentage: Number(fields.service_fee_percentage),
  rate_limit_per_minute: fields.rate_limit_per_minute.trim() === '' ? null : Number(fields.rate_limit_per_minute),
});

export function TermsInputs({ fields, onChange }: { fields: TermsFields; onChange: (fields: TermsFields) => void }) {
  const set = <K extends keyof TermsFields>(name: K, value: TermsFields[K]) => onChange({ ...fields, [name]: value });
  return (
    <>
      <label>
        Service fee (%)
        <input type="number" min={0} max={100} step="any" required value={fields.service_fee_percentage} onChange={(event) => set('service_fee_percentage', event.target.value)} />
      </label>
      <label>
        Status
        <select value={fields.status} onChange={(event) => set('status', event.target.value as PartnerStatus)}>
          <option value="active">active</option>
          <option value="suspended">suspended</option>
        </select>
      </label>
      <label>
        KYC status
        <select value={fields.kyc_status} onChange={(event) => set('kyc_status', event.target.value as KycStatus)}>
          <option value="pending">pending</option>
          <option value="approved">approved</option>
          <option value="rejected">rejected</option>
        </select>
      </label>
      <label>
        Rate limit (per minute)
        <input type="number" min={1} step={1} placeholder="service default" value={fields.rate_limit_per_minute} onChange={(event) => set('rate_limit_per_minute', event.target.value)} />
      </label>
    </>
  );
}
