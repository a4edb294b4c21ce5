/** One page of partners (`GET /admin/partners`), newest first, with Suspend/Activate on each row. */
import type { Partner } from '../api-types';
import { ErrorNotice } from '../feedback';
import { when } from '../format';
import { ListView } from '../list-view';
import { useCursor } from '../paging';
import { useApi } from '../session';
import { useAction, useLoad } from '../use-call';

interface Props {
  onEdit: (partner: Partner) => void;
  onShowKeys: (partnerId: string) => void;
}

export function PartnerList({ onEdit, onShowKeys }: Props) {
  const api = useApi();
  const paging = useCursor();
  const page = useLoad(() => api.listPartners(paging.cursor), [api, paging.cursor]);
  const toggle = useAction();
  const setStatus = async (partner: Partner) => {
    const updated = await toggle.run(() => api.updatePartner(partner.partner_id, { status: partner.status === 'active' ? 'suspended' : 'active' }));
    if (updated !== undefined) page.reload();
  };
  return (
    <>
      <ErrorNotice error={toggle.error} />
      <ListView
        load={page}
        label="Partners"
        empty="No partners yet: create one above."
        headers={['Name', 'Partner id', 'Status', 'KYC', 'Service fee', 'Rate limit', 'Created', 'Actions']}
        paging={paging}
        row={(partner) => (
          <tr key={partner.partner_id}>
            <td>{partner.name}</td>
            <td>
              <code>{partner.partner_id}</code>
            </td>
            <td>
              <span className={`badge ${partner.status}`}>{partner.status}</span>
            </td>
            <td>{partner.kyc_status}</td>
            <td>{partner.service_fee_percentage} %</td>
            <td>{partner.rate_limit_per_minute === null ? 'default' : `${partner.rate_limit_per_minute}/min`}</td>
            <td>{when(partner.created_at)}</td>
            <td className="actions">
              <button type="button" className="secondary" disabled={toggle.pending} onClick={() => setStatus(partner)}>
                {partner.status === 'active' ? 'Suspend' : 'Activate'}
              </button>
              <button type="button" className="secondary" onClick={() => onEdit(partner)}>
                Edit
              </button>
              <button type="button" className="secondary" onClick={() => onShowKeys(partner.partner_id)}>
                API keys
              </button>
            </td>
          </tr>
        )}
      />
    </>
  );
}
