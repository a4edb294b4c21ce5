/**
 * The API reference's "Branding" section: the checkout widget's public packet (`functions/branding-packet`).
 */
import { BrandingPacket } from '../response-schemas';
import { prose, type RouteDoc } from '../route-doc';

/** What `cors()` (lib/http/middlewares.ts) adds to every answer of this route, the preflight's included. */
const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '`*`',
  'Access-Control-Allow-Methods': '`GET, OPTIONS`',
  'Access-Control-Allow-Headers': '`content-type`',
  'Access-Control-Max-Age': '`600` (seconds a browser may cache the preflight)',
};

export const brandingPacketDoc: RouteDoc = {
  summary: "Get a merchant's checkout branding (widget mode)",
  description: prose`
    What a partner's checkout widget shows for one merchant: the partner's branding (\`display_name\` falls back to the
    partner's name; \`logo_url\` and \`brand_color\` are null when unset) and the processor's publishable key for the
    browser. Public (no API key) and CORS-enabled (\`Access-Control-Allow-Origin: *\`), so a browser may call it
    directly; it carries no secrets. The \`OPTIONS\` preflight is answered 204 with the CORS headers and no body (its
    query is not read). A missing parameter is 400 VALIDATION_ERROR; an unknown partner, or a client the partner does
    not have, is 404 PARTNER_NOT_FOUND / CLIENT_NOT_FOUND. No payment gate: a suspended partner or merchant still has
    its packet.
  `,
  tag: 'Branding',
  responses: { 200: { description: 'The branding packet', schema: BrandingPacket, headers: CORS_HEADERS } },
  preflight: { description: 'The CORS preflight: no body', headers: CORS_HEADERS },
  errors: ['PARTNER_NOT_FOUND', 'CLIENT_NOT_FOUND', 'PROCESSOR_PUBLISHABLE_MISSING'],
};
