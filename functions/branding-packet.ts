/**
 * GET /api/v1/branding/packet?partner_id=&client_id= (widget mode, decisions.md §10): public and CORS-enabled
 * (the OPTIONS preflight is answered too), so a browser may call it directly; it carries no secrets.
 */
import * as z from 'zod';
import { brandingDeps } from '../lib/adapters/branding';
import { httpRoute } from '../lib/adapters/http-route';
import { presentBranding } from '../lib/http/presenters';
import { BrandingPacket } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { getBrandingPacket } from '../lib/use-cases/transactions';

const Query = z.object({
  partner_id: z.string().min(1).max(64).meta({ description: "The partner's id", example: 'ptr_cc0g7fs3hpkca17rfvndrekn' }),
  client_id: z.string().min(1).max(128).meta({ description: "The merchant: the partner's own `client_id`", example: 'merchant-001' }),
});

/** What `cors()` (lib/http/middlewares.ts) adds to every answer of this route, the preflight's included. */
const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '`*`',
  'Access-Control-Allow-Methods': '`GET, OPTIONS`',
  'Access-Control-Allow-Headers': '`content-type`',
  'Access-Control-Max-Age': '`600` (seconds a browser may cache the preflight)',
};

const doc: RouteDoc = {
  summary: "Get a merchant's checkout branding (widget mode)",
  description:
    "What a partner's checkout widget shows for one merchant: the partner's branding (`display_name` falls back to the partner's name; `logo_url` " +
    "and `brand_color` are null when unset) and the processor's publishable key for the browser. Public (no API key) and CORS-enabled " +
    '(`Access-Control-Allow-Origin: *`), so a browser may call it directly; it carries no secrets. The `OPTIONS` preflight is answered 204 with ' +
    'the CORS headers and no body (its query is not read). A missing parameter is 400 VALIDATION_ERROR; an unknown partner, or a client the ' +
    'partner does not have, is 404 PARTNER_NOT_FOUND / CLIENT_NOT_FOUND. No payment gate: a suspended partner or merchant still has its packet.',
  tag: 'Branding',
  responses: { 200: { description: 'The branding packet', schema: BrandingPacket, headers: CORS_HEADERS } },
  preflight: { description: 'The CORS preflight: no body', headers: CORS_HEADERS },
  errors: ['PARTNER_NOT_FOUND', 'CLIENT_NOT_FOUND', 'PROCESSOR_PUBLISHABLE_MISSING'],
};

export const handler = httpRoute({ access: 'public', cors: true, query: Query, doc }, async ({ query }) => {
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
