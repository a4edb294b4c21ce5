/** GET /api/v1/clients: the partner's merchants, newest first, paged, optional `status` filter. */
import { httpRoute } from '../lib/composition/http-route';
import { presentClient, presentPage } from '../lib/http/presenters';
import { ClientListQuery } from '../lib/http/client-schemas';
import { clientStore } from '../lib/composition/clients';
import { listClients } from '../lib/use-cases/clients';
import { listClientsDoc } from '../lib/http/route-docs/clients';

export const handler = httpRoute({ access: 'partner-read', partnerOnly: true, query: ClientListQuery, doc: listClientsDoc }, async ({ caller, query }) => {
  const page = await listClients(clientStore, caller, { ...query, partnerId: query.partner_id });
  return { status: 200, body: presentPage(page, presentClient) };
});
