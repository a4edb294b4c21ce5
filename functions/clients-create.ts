/** POST /api/v1/clients: register a merchant under the API key's partner. */
import { httpRoute } from '../lib/composition/http-route';
import { presentClient } from '../lib/http/presenters';
import { CreateClientBody } from '../lib/http/client-schemas';
import { clientStore } from '../lib/composition/clients';
import { registerClient } from '../lib/use-cases/clients';
import { registerClientDoc } from '../lib/http/route-docs/clients';

export const handler = httpRoute(
  { access: 'partner-mutation', partnerOnly: true, body: CreateClientBody, doc: registerClientDoc },
  async ({ caller, body }) => {
    const client = await registerClient(clientStore, caller, body.partner_id, {
      clientId: body.client_id,
      legalName: body.legal_name,
      status: body.status,
      partnerFeePercentage: body.partner_fee_percentage,
      partnerFeeFlatUsdCents: body.partner_fee_flat_usd,
    });
    return { status: 201, body: presentClient(client) };
  },
);
