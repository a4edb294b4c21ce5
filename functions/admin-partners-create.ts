/** POST /api/v1/admin/partners: create a partner (decisions.md §2). */
import { httpRoute } from '../lib/http/chain';
import { CreatePartnerBody } from '../lib/http/partner-schemas';
import { presentPartner } from '../lib/http/presenters';
import { createPartner } from '../lib/use-cases/partners';

export const handler = httpRoute({ access: 'admin', body: CreatePartnerBody }, async ({ body }) => {
  const partner = await createPartner({
    name: body.name,
    serviceFeePercentage: body.service_fee_percentage,
    status: body.status,
    kycStatus: body.kyc_status,
    rateLimitPerMinute: body.rate_limit_per_minute,
    branding: body.branding,
  });
  return { status: 201, body: presentPartner(partner) };
});
