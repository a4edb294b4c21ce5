/** Request schemas of the admin partner routes (create and update share their field rules). */
import * as z from 'zod';
import { KYC_STATUSES, PARTNER_STATUSES } from '../domain/partner';
import { percentage, text } from './schemas';

export const PartnerParams = z.object({
  partner_id: z.string().min(1).max(64).meta({ description: "The partner's id (`ptr_…`), as `POST /admin/partners` answered it", example: 'ptr_cc0g7fs3hpkca17rfvndrekn' }),
});

/** `branding` of PATCH /admin/partners/{id} (decisions.md §10); each part may be cleared with null. */
const Branding = z
  .strictObject({
    display_name: text(1, 100)
      .nullable()
      .optional()
      .meta({ description: "Name shown in the checkout widget (1-100 characters); absent or null: the partner's `name`", example: 'Acme Payments' }),
    logo_url: z
      .url({ protocol: /^https?$/, error: 'Must be an http(s) URL' })
      .max(2048)
      // The packet is public (`GET /branding/packet`): a URL with a user name or password would publish them.
      .refine((url) => !/^https?:\/\/[^/?#]*@/i.test(url), 'Must not carry a user name or password')
      .nullable()
      .optional()
      .meta({ description: 'An http(s) URL of the logo (at most 2048 characters, no user name or password: the packet is public); absent or null: none', example: 'https://cdn.example.com/acme/logo.png' }),
    brand_color: z
      .string()
      .regex(/^#[0-9a-fA-F]{6}$/, 'Must be a colour like #1a2b3c')
      .nullable()
      .optional()
      .meta({ description: 'A colour as `#rrggbb`; absent or null: none', example: '#1a2b3c' }),
  })
  .transform((branding) => ({
    displayName: branding.display_name ?? null,
    logoUrl: branding.logo_url ?? null,
    brandColor: branding.brand_color ?? null,
  }))
  .meta({ description: 'What the checkout widget shows (`GET /branding/packet`). The object replaces the whole branding: a part left out is cleared' });

const fields = {
  name: text(1, 200).meta({ description: "The partner's name (1-200 characters, no control characters, no whitespace at either end)", example: 'Acme Payments Ltd' }),
  service_fee_percentage: percentage.meta({
    description: "The platform's share of each payment, in percent (0-100, at most 4 decimals: 2.5 means 2.5 %). A merchant's `partner_fee_percentage` may not be below it",
    example: 2.5,
  }),
  status: z.enum(PARTNER_STATUSES).meta({
    description: "`active` or `suspended`: a suspended partner's payments are refused (403 PARTNER_NOT_ACTIVE) and so is managing its clients (403 PARTNER_SUSPENDED)",
    example: 'active',
  }),
  kyc_status: z.enum(KYC_STATUSES).meta({ description: "The partner's KYC review: payments need `approved` (else 403 KYC_NOT_APPROVED)", example: 'approved' }),
  /** `null`: the default `RATE_LIMIT_PER_MINUTE`. */
  rate_limit_per_minute: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .nullable()
    .meta({ description: "Signed mutations a minute made for the partner (1-1,000,000; over it: 429 RATE_LIMITED); null: the service's default (`RATE_LIMIT_PER_MINUTE`)", example: 600 }),
  branding: Branding.nullable().meta({ description: "The checkout widget's branding; null clears it (the widget then shows the partner's `name`)" }),
};

export const CreatePartnerBody = z.strictObject({
  name: fields.name,
  service_fee_percentage: fields.service_fee_percentage,
  status: fields.status.default('active').meta({ description: "`active` (default) or `suspended`: a suspended partner's payments are refused (403 PARTNER_NOT_ACTIVE) and so is managing its clients (403 PARTNER_SUSPENDED)" }),
  kyc_status: fields.kyc_status.default('pending').meta({ description: "The partner's KYC review, default `pending`: payments need `approved` (else 403 KYC_NOT_APPROVED)" }),
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
