/** POST /api/v1/admin/partners: create a partner (decisions.md §2), audited. */
import { httpRoute } from '../lib/adapters/http-route';
import { CreatePartnerBody, toPartnerFields } from '../lib/http/partner-schemas';
import { presentPartner } from '../lib/http/presenters';
import { Partner } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { partnerDeps } from '../lib/adapters/partners';
import { createPartner } from '../lib/use-cases/partners';

const doc: RouteDoc = {
  summary: 'Create a partner',
  description:
    'Creates a partner with a new id (`ptr_…`). `status` defaults to `active`, `kyc_status` to `pending` (payments need `approved`), ' +
    "`rate_limit_per_minute` to the service's default and `branding` to none. Issue its API keys with `POST /admin/partners/{partner_id}/api-keys`. " +
    'The creation is recorded in the audit log with it (`partner.created`: the admin and the settings as created).',
  tag: 'Admin: partners',
  responses: {
    201: { description: 'The partner created', schema: Partner },
  },
  errors: [],
  example: { name: 'Acme Payments Ltd', service_fee_percentage: 2.5, kyc_status: 'approved' },
};

export const handler = httpRoute({ access: 'admin', body: CreatePartnerBody, doc }, async ({ body, caller }) => ({
  status: 201,
  body: presentPartner(await createPartner(partnerDeps, toPartnerFields(body), caller)),
}));
