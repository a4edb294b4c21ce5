/** PATCH /api/v1/admin/partners/{partner_id}: change any of the partner's settings, audited. */
import { httpRoute } from '../lib/adapters/http-route';
import { PartnerParams, toPartnerFields, UpdatePartnerBody } from '../lib/http/partner-schemas';
import { presentPartner } from '../lib/http/presenters';
import { Partner } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { partnerDeps } from '../lib/adapters/partners';
import { updatePartner } from '../lib/use-cases/partners';

const doc: RouteDoc = {
  summary: 'Update a partner',
  description:
    'Changes the fields given (at least one); the others stay as they are. `rate_limit_per_minute: null` returns to the ' +
    "service's default; `branding` replaces the whole branding (a part left out is cleared), and `branding: null` clears it. " +
    'A change of `status` or `kyc_status` applies from the next request: suspending a partner refuses its payments. ' +
    'The change is recorded in the audit log with it (`partner.updated`: the admin, the fields set, each as set and as it was; ' +
    "a logo URL without its query).",
  tag: 'Admin: partners',
  responses: {
    200: { description: 'The partner, updated', schema: Partner },
  },
  errors: ['PARTNER_NOT_FOUND'],
  example: { status: 'active', kyc_status: 'approved', branding: { display_name: 'Acme', logo_url: 'https://cdn.example.com/acme/logo.png', brand_color: '#1a2b3c' } },
};

export const handler = httpRoute({ access: 'admin', params: PartnerParams, body: UpdatePartnerBody, doc }, async ({ params, body, caller }) => ({
  status: 200,
  body: presentPartner(await updatePartner(partnerDeps, params.partner_id, toPartnerFields(body), caller)),
}));
