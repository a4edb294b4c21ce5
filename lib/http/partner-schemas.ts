/** Request schemas of the admin partner routes (create and update share their field rules). */
import * as z from 'zod';
import { KYC_STATUSES, PARTNER_STATUSES } from '../domain/partner';
import { percentage, text } from './schemas';

export const PartnerParams = z.object({ partner_id: z.string().min(1).max(64) });

/** `branding` of PATCH /admin/partners/{id} (decisions.md §10); each part may be cleared with null. */
const Branding = z
  .strictObject({
    display_name: text(1, 100).nullable().optional(),
    logo_url: z.url({ protocol: /^https?$/, error: 'Must be an http(s) URL' }).max(2048).nullable().optional(),
    brand_color: z.string().regex(/^#[0-9a-fA-F]{6}$/, 'Must be a colour like #1a2b3c').nullable().optional(),
  })
  .transform((branding) => ({
    displayName: branding.display_name ?? null,
    logoUrl: branding.logo_url ?? null,
    brandColor: branding.brand_color ?? null,
  }));

const fields = {
  name: text(1, 200),
  service_fee_percentage: percentage,
  status: z.enum(PARTNER_STATUSES),
  kyc_status: z.enum(KYC_STATUSES),
  /** `null`: the default `RATE_LIMIT_PER_MINUTE`. */
  rate_limit_per_minute: z.number().int().min(1).max(1_000_000).nullable(),
  branding: Branding.nullable(),
};

export const CreatePartnerBody = z.strictObject({
  name: fields.name,
  service_fee_percentage: fields.service_fee_percentage,
  status: fields.status.default('active'),
  kyc_status: fields.kyc_status.default('pending'),
  rate_limit_per_minute: fields.rate_limit_per_minute.default(null),
  branding: fields.branding.default(null),
});

export const UpdatePartnerBody = z
  .strictObject({
    name: fields.name.optional(),
    service_fee_percentage: fields.service_fee_percentage.optional(),
    status: fields.status.optional(),
    kyc_status: fields.kyc_status.optional(),
    rate_limit_per_minute: fields.rate_limit_per_minute.optional(),
    branding: fields.branding.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, 'At least one field to change is required');

/** The partner fields of a create or update body, as the use cases name them (absent fields stay absent). */
export const toPartnerFields = <T extends Partial<z.output<typeof CreatePartnerBody>>>(
  body: T,
): {
  name: T['name'];
  serviceFeePercentage: T['service_fee_percentage'];
  status: T['status'];
  kycStatus: T['kyc_status'];
  rateLimitPerMinute: T['rate_limit_per_minute'];
  branding: T['branding'];
} => ({
  name: body.name,
  serviceFeePercentage: body.service_fee_percentage,
  status: body.status,
  kycStatus: body.kyc_status,
  rateLimitPerMinute: body.rate_limit_per_minute,
  branding: body.branding,
});
