/** PATCH /api/v1/admin/partners/{partner_id}: change any of the partner's settings. */
import { httpRoute } from '../lib/http/chain';
import { PartnerParams, UpdatePartnerBody } from '../lib/http/partner-schemas';
import { presentPartner } from '../lib/http/presenters';
import { updatePartner } from '../lib/use-cases/partners';

export const handler = httpRoute(
  { access: 'admin', params: PartnerParams, body: UpdatePartnerBody },
  async ({ params, body }) => {
    const partner = await updatePartner(params.partner_id, {
      name: body.name,
      serviceFeePercentage: body.service_fee_percentage,
      status: body.status,
      kycStatus: body.kyc_status,
      rateLimitPerMinute: body.rate_limit_per_minute,
      branding: body.branding,
    });
    return { status: 200, body: presentPartner(partner) };
  },
);
