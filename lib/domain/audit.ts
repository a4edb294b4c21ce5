/**
 * Audit events (decisions.md §2 `GET /admin/audit-events`): an append-only record of what happened to partner
 * webhooks, of what an admin changed (partners, API keys) and of the settlement an admin started, written in the
 * same DynamoDB transaction as the change it records, so the log and the state never disagree (an admin's
 * settlement run, many transactions, is recorded before it starts: the request, not its outcome). Pure: no I/O.
 */
import type { Caller } from './caller';
import { newId } from './ids';
import type { Partner } from './partner';

export const AUDIT_EVENT_TYPES = [
  /** A delivery answered 2xx (the delivery is `succeeded`). */
  'webhook_delivery.succeeded',
  /** One attempt failed and another is scheduled (the delivery stays `pending`). */
  'webhook_delivery.attempt_failed',
  /** The last attempt failed, or the endpoint is gone (the delivery is `failed`, left for resend). */
  'webhook_delivery.failed',
  /** An admin asked for a new delivery of the same event. */
  'webhook_delivery.resent',
  'webhook_endpoint.created',
  'webhook_endpoint.deleted',
  /** An admin ran settlement (`POST /admin/settlements/run`), recorded before the run: its scope, not its batches. */
  'settlement_run.requested',
  /** An admin's pay took the batch for a payout attempt (`POST /admin/settlements/{id}/pay`), recorded with that claim. */
  'settlement_batch.payout_started',
  /** An admin created a partner (`POST /admin/partners`): its settings as created. */
  'partner.created',
  /** An admin changed a partner (`PATCH /admin/partners/{id}`): the fields the request set, each before and after. */
  'partner.updated',
  /** An admin issued an API key (partner-scoped or platform-wide): its id and scope, never the key, its hash or its secret. */
  'api_key.created',
  /** An admin revoked an API key (`DELETE /admin/api-keys/{key_id}`). */
  'api_key.revoked',
] as const;

export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

export type AuditResourceType = 'webhook_delivery' | 'webhook_endpoint' | 'settlement_run' | 'settlement_batch' | 'partner' | 'api_key';

/** Plain values only: an audit event never holds a secret, a URL's query or a response body. */
export type AuditDetails = Record<string, string | number | boolean | null>;

export interface AuditEvent {
  id: string;
  type: AuditEventType;
  /** The partner it concerns; null for what concerns every partner (a settlement run without `partner_id`, a platform-wide key). */
  partnerId: string | null;
  resourceType: AuditResourceType;
  resourceId: string;
  details: AuditDetails;
  createdAt: string;
}

/** A new audit event, at `at`, about what `fields` name. */
export const newAuditEvent = (fields: Omit<AuditEvent, 'id' | 'createdAt'>, at: Date): AuditEvent => ({
  id: newId.auditEvent(),
  ...fields,
  createdAt: at.toISOString(),
});

/**
 * Who made an admin change, as the events record it (`details.admin`): the admin token's subject. `null` only when
 * the use case ran outside a request (a script or a test calling it directly), never for an HTTP route.
 */
export const adminOf = (caller: Caller | undefined): string | null => (caller?.kind === 'admin' ? caller.subject : null);

/** The partner settings an audit event names. */
export type PartnerSettings = Pick<Partner, 'name' | 'status' | 'kycStatus' | 'serviceFeePercentage' | 'rateLimitPerMinute' | 'branding'>;

/** Each setting's API name (the fields of `POST`/`PATCH /admin/partners`), in the order events list them. */
const SETTING_NAMES = {
  name: 'name',
  status: 'status',
  kycStatus: 'kyc_status',
  serviceFeePercentage: 'service_fee_percentage',
  rateLimitPerMinute: 'rate_limit_per_minute',
  branding: 'branding',
} as const satisfies Record<keyof PartnerSettings, string>;

const settingsGiven = (settings: Partial<PartnerSettings>) =>
  (Object.keys(SETTING_NAMES) as Array<keyof PartnerSettings>).filter((setting) => settings[setting] !== undefined);

/**
 * A logo URL as the log keeps it: scheme, host and path only. Its query and fragment may carry a token (a signed
 * CDN link), and an audit event never holds a URL's query.
 */
function withoutQuery(url: string | null): string | null {
  if (url === null) return null;
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return null;
  }
}

/**
 * The settings given, as plain values under their API names with `suffix` added (`status_before`); branding
 * flattened (`branding_display_name`, `branding_logo_url` without its query, `branding_brand_color`), or
 * `branding: null` when there is none. Settings absent from `settings` are left out.
 */
export function partnerSettingsDetails(settings: Partial<PartnerSettings>, suffix = ''): AuditDetails {
  const details: AuditDetails = {};
  for (const setting of settingsGiven(settings)) {
    const value = settings[setting];
    if (setting !== 'branding') details[`${SETTING_NAMES[setting]}${suffix}`] = value as string | number | null;
    else if (settings.branding === null || settings.branding === undefined) details[`branding${suffix}`] = null;
    else {
      details[`branding_display_name${suffix}`] = settings.branding.displayName;
      details[`branding_logo_url${suffix}`] = withoutQuery(settings.branding.logoUrl);
      details[`branding_brand_color${suffix}`] = settings.branding.brandColor;
    }
  }
  return details;
}

/**
 * What a partner update did: `fields`, the API names of the settings it set (comma-separated), then each of them
 * as set (`status`) and as it was (`status_before`). A setting set to the value it had is listed too: the admin
 * set it.
 */
export function partnerChangeDetails(before: PartnerSettings, changes: Partial<PartnerSettings>): AuditDetails {
  const given = settingsGiven(changes);
  const previous = Object.fromEntries(given.map((setting) => [setting, before[setting]])) as Partial<PartnerSettings>;
  return {
    fields: given.map((setting) => SETTING_NAMES[setting]).join(','),
    ...partnerSettingsDetails(changes),
    ...partnerSettingsDetails(previous, '_before'),
  };
}
