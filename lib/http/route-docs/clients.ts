/**
 * The API reference's "Clients" section: the partner's merchants (`functions/clients-*`).
 */
import { Client, CreatedClient, pageOf } from '../response-schemas';
import { prose, type RouteDoc } from '../route-doc';

export const registerClientDoc: RouteDoc = {
  summary: 'Register a merchant (client)',
  description: prose`
    Registers a merchant under the partner of the API key. Needs a partner-scoped key (a platform-wide key is 403
    API_KEY_SCOPE_FORBIDDEN); \`partner_id\` is not sent. A suspended partner cannot manage its merchants (403
    PARTNER_SUSPENDED). \`partner_fee_percentage\` may not be below the partner's service fee percentage (400
    CLIENT_FEE_BELOW_SVC_FEE). A \`client_id\` the partner already has is 409 CLIENT_EXISTS. The \`client_id\` can then
    be used in the payment routes while the client is \`active\`. Idempotency key: one per merchant, e.g.
    \`client-<client_id>\`.
  `,
  tag: 'Clients',
  responses: {
    201: { description: 'The registered client', schema: CreatedClient },
  },
  errors: ['PARTNER_NOT_FOUND', 'PARTNER_SUSPENDED', 'CLIENT_FEE_BELOW_SVC_FEE', 'CLIENT_EXISTS'],
  example: { client_id: 'merchant-001', legal_name: 'Merchant One Ltd', partner_fee_percentage: 3.5, partner_fee_flat_usd: 0.3 },
};

export const listClientsDoc: RouteDoc = {
  summary: "List the partner's merchants (clients)",
  description: prose`
    The merchants of the API key's partner, newest first (\`created_at\` descending), paged with \`limit\` and
    \`cursor\`. Needs a partner-scoped key (a platform-wide key is 403 API_KEY_SCOPE_FORBIDDEN); a suspended partner is
    403 PARTNER_SUSPENDED.
  `,
  tag: 'Clients',
  responses: {
    200: { description: 'One page of clients, newest first', schema: pageOf(Client, 'ClientPage') },
  },
  errors: ['PARTNER_NOT_FOUND', 'PARTNER_SUSPENDED'],
};
