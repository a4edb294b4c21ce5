/**
 * GET /api/v1/branding/packet?partner_id=&client_id= (widget mode, decisions.md §10): public and CORS-enabled
 * (the OPTIONS preflight is answered too), so a browser may call it directly; it carries no secrets.
 */
import * as z from 'zod';
import { brandingDeps } from '../lib/composition/branding';
import { httpRoute } from '../lib/composition/http-route';
import { presentBranding } from '../lib/http/presenters';
import { getBrandingPacket } from '../lib/use-cases/transactions';
import { brandingPacketDoc } from '../lib/http/route-docs/branding';

const Query = z.object({
  partner_id: z.string().min(1).max(64).meta({ description: "The partner's id", example: 'ptr_cc0g7fs3hpkca17rfvndrekn' }),
  client_id: z.string().min(1).max(128).meta({ description: "The merchant: the partner's own `client_id`", example: 'merchant-001' }),
});

export const handler = httpRoute({ access: 'public', cors: true, query: Query, doc: brandingPacketDoc }, async ({ query }) => {
  const { partner, client, publishableKey } = await getBrandingPacket(brandingDeps, query.partner_id, query.client_id);
  return {
    status: 200,
    body: {
      partner_id: partner.partnerId,
      client_id: client.clientId,
      ...presentBranding(partner),
      processor_publishable_key: publishableKey,
    },
  };
});
