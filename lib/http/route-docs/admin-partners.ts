/**
 * The API reference's "Admin: partners" section: partners and their API keys (`functions/admin-partners-*`, `admin-*api-keys-*`).
 */
import { ApiKeyPage, IssuedApiKey, pageOf, Partner } from '../response-schemas';
import { prose, type RouteDoc } from '../route-doc';

export const createPartnerDoc: RouteDoc = {
  summary: 'Create a partner',
  description: prose`
    Creates a partner with a new id (\`ptr_…\`). \`status\` defaults to \`active\`, \`kyc_status\` to \`pending\`
    (payments need \`approved\`), \`rate_limit_per_minute\` to the service's default and \`branding\` to none. Issue its
    API keys with \`POST /admin/partners/{partner_id}/api-keys\`. The creation is recorded in the audit log with it
    (\`partner.created\`: the admin and the settings as created).
  `,
  tag: 'Admin: partners',
  responses: {
    201: { description: 'The partner created', schema: Partner },
  },
  errors: [],
  example: { name: 'Acme Payments Ltd', service_fee_percentage: 2.5, kyc_status: 'approved' },
};

export const listPartnersDoc: RouteDoc = {
  summary: 'List partners',
  description: "Every partner, newest first, paged by `limit` (1-200, default 50) and `cursor` (the previous page's `next_cursor`).",
  tag: 'Admin: partners',
  responses: {
    200: { description: 'One page of partners, newest first', schema: pageOf(Partner, 'PartnerPage') },
  },
  errors: [],
};

export const getPartnerDoc: RouteDoc = {
  summary: 'Get a partner',
  description: 'The partner as stored now (a strongly consistent read).',
  tag: 'Admin: partners',
  responses: {
    200: { description: 'The partner', schema: Partner },
  },
  errors: ['PARTNER_NOT_FOUND'],
};

export const updatePartnerDoc: RouteDoc = {
  summary: 'Update a partner',
  description: prose`
    Changes the fields given (at least one); the others stay as they are. \`rate_limit_per_minute: null\` returns to the
    service's default; \`branding\` replaces the whole branding (a part left out is cleared), and \`branding: null\`
    clears it. A change of \`status\` or \`kyc_status\` applies from the next request: suspending a partner refuses its
    payments. The change is recorded in the audit log with it (\`partner.updated\`: the admin, the fields set, each as
    set and as it was; a logo URL without its query).
  `,
  tag: 'Admin: partners',
  responses: {
    200: { description: 'The partner, updated', schema: Partner },
  },
  errors: ['PARTNER_NOT_FOUND'],
  example: { status: 'active', kyc_status: 'approved', branding: { display_name: 'Acme', logo_url: 'https://cdn.example.com/acme/logo.png', brand_color: '#1a2b3c' } },
};

export const issuePartnerApiKeyDoc: RouteDoc = {
  summary: 'Issue an API key for a partner',
  description: prose`
    Creates an API key scoped to the partner, and its HMAC secret. Both are shown only in this answer: the key is stored
    as its SHA-256, the secret encrypted. The partner must exist when the key is written. A partner may hold several
    keys (rotation: issue a new one, then revoke the old one). The issue is recorded in the audit log with the key
    (\`api_key.created\`: the admin, the key's id and scope; never the key or its secret).
  `,
  tag: 'Admin: partners',
  responses: {
    201: { description: 'The key, its id, its HMAC secret and its `partner_id`', schema: IssuedApiKey },
  },
  errors: ['PARTNER_NOT_FOUND'],
  example: { scope: 'partner' },
};

export const issuePlatformApiKeyDoc: RouteDoc = {
  summary: 'Issue a platform-wide API key',
  description: prose`
    Creates an API key that may act for any partner (a mutation names its partner in the body), and its HMAC secret.
    Both are shown only in this answer: the key is stored as its SHA-256, the secret encrypted. Partner-only routes
    (\`/clients\`) refuse platform-wide keys (403 API_KEY_SCOPE_FORBIDDEN). List the platform-wide keys with
    \`GET /admin/api-keys\`. The issue is recorded in the audit log with the key (\`api_key.created\`, \`partner_id\`
    null: the admin, the key's id and scope).
  `,
  tag: 'Admin: partners',
  responses: {
    201: { description: 'The key, its id and its HMAC secret (no `partner_id`)', schema: IssuedApiKey },
  },
  errors: [],
  example: { scope: 'platform' },
};

export const listPartnerApiKeysDoc: RouteDoc = {
  summary: "List a partner's API keys",
  description: prose`
    The partner's API keys, newest first, paged by \`limit\` (1-200, default 50) and \`cursor\` (the previous page's
    \`next_cursor\`): their \`key_id\`, scope and creation time, never the key or its HMAC secret (shown only when
    issued). Revoke one with \`DELETE /admin/api-keys/{key_id}\`: a revoked key is deleted, so it is no longer listed.
    Platform-wide keys are listed by \`GET /admin/api-keys\`.
  `,
  tag: 'Admin: partners',
  responses: {
    200: { description: "One page of the partner's keys, newest first", schema: ApiKeyPage },
  },
  errors: ['PARTNER_NOT_FOUND'],
};

export const listPlatformApiKeysDoc: RouteDoc = {
  summary: 'List the platform-wide API keys',
  description: prose`
    The API keys of no partner (issued by \`POST /admin/api-keys\`), newest first, paged by \`limit\` (1-200, default
    50) and \`cursor\` (the previous page's \`next_cursor\`): their \`key_id\`, scope and creation time, never the key
    or its HMAC secret (shown only when issued). A partner's keys are listed by
    \`GET /admin/partners/{partner_id}/api-keys\`. Revoke one with \`DELETE /admin/api-keys/{key_id}\`: a revoked key is
    deleted, so it is no longer listed.
  `,
  tag: 'Admin: partners',
  responses: {
    200: { description: 'One page of the platform-wide keys, newest first', schema: ApiKeyPage },
  },
  errors: [],
};

export const revokeApiKeyDoc: RouteDoc = {
  summary: 'Revoke an API key',
  description: prose`
    Deletes the key (partner-scoped or platform-wide): it is refused from the very next request (401 API_KEY_INVALID). A
    key already revoked is 404. The revocation is recorded in the audit log with it (\`api_key.revoked\`: the admin and
    the key's scope, under its partner).
  `,
  tag: 'Admin: partners',
  responses: {
    204: { description: 'Revoked' },
  },
  errors: ['API_KEY_NOT_FOUND'],
};
