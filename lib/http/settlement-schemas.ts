/** Request schemas of the settlement routes (interface-spec.md; decisions.md §7, §9). */
import * as z from 'zod';
import { BATCH_STATUSES } from '../domain/settlement';
import type { BatchFilters } from '../domain/settlement';
import type { RunScope } from '../use-cases/settlements';
import { PageQuery } from './schemas';

const partnerId = z.string().min(1).max(64);
const clientId = z.string().min(1).max(128);
/** A batch id as callers send it: any text of sane length; one that names no batch is 404 BATCH_NOT_FOUND (the spec's "invalid batch id"). */
const batchId = z.string().min(1).max(128);

const BATCH_ID_EXAMPLE = '3f0c9d62-8a1e-4b7f-9c2d-5e6a7b8c9d0e';
const PARTNER_ID_EXAMPLE = 'ptr_8d0m4k7q2w9e3r5t6y1u0i8o7p';

/** `POST /settlements/run`: optional `partner_id` and `client_id` query parameters; no body. */
export const SettlementRunQuery = z.object({
  partner_id: partnerId.optional().meta({
    description:
      "Settle this partner only. A partner key settles its own partner whatever is sent (another partner's id is 403 API_KEY_SCOPE_FORBIDDEN); " +
      'a platform key settles every partner without it, and an unknown one is 404 PARTNER_NOT_FOUND',
    example: PARTNER_ID_EXAMPLE,
  }),
  client_id: clientId.optional().meta({ description: "Settle this merchant only: the partner's own `client_id`", example: 'merchant-001' }),
});

export const SettlementListQuery = PageQuery.extend({
  status: z.enum(BATCH_STATUSES).optional().meta({ description: 'Only batches in this status', example: 'pending' }),
  client_id: clientId.optional().meta({ description: "Only this merchant's batches: the partner's own `client_id`", example: 'merchant-001' }),
  partner_id: partnerId.optional().meta({
    description:
      "A platform key: only this partner's batches (without it, every partner's). A partner key always lists its own partner's; " +
      "another partner's id is 403 API_KEY_SCOPE_FORBIDDEN",
    example: PARTNER_ID_EXAMPLE,
  }),
});

export const SettlementPayBody = z.strictObject({
  settlement_batch_id: batchId.meta({
    description: "The batch's `id` (from `POST /settlements/run` or `GET /settlements`); one that names no batch the key may see is 404 BATCH_NOT_FOUND",
    example: BATCH_ID_EXAMPLE,
  }),
});

export const SettlementParams = z.object({
  id: batchId.meta({ description: "The batch's `id`; one that names no batch the key may see is 404 BATCH_NOT_FOUND", example: BATCH_ID_EXAMPLE }),
});

/** A run query's scope as the use case names it (`POST /settlements/run` and `POST /admin/settlements/run`). */
export const toRunScope = (query: z.output<typeof SettlementRunQuery>): RunScope => ({ partnerId: query.partner_id, clientId: query.client_id });

/** A list query's filters as the store names them (`GET /settlements` and `GET /admin/settlements`). */
export const toBatchFilters = (query: z.output<typeof SettlementListQuery>): BatchFilters => ({ status: query.status, clientId: query.client_id });

/** `POST /admin/settlements/run`: the partner route's query, for an admin (who may name any partner). */
export const AdminSettlementRunQuery = SettlementRunQuery.extend({
  partner_id: partnerId.optional().meta({ description: 'Settle this partner only (else every partner); an unknown one is 404 PARTNER_NOT_FOUND', example: PARTNER_ID_EXAMPLE }),
});

/** `GET /admin/settlements`: the partner route's query, for an admin (who may name any partner). */
export const AdminSettlementListQuery = SettlementListQuery.extend({
  partner_id: partnerId.optional().meta({ description: "Only this partner's batches (else every partner's)", example: PARTNER_ID_EXAMPLE }),
});

/** The admin routes' batch in the path: `/admin/settlements/{settlement_batch_id}/…`. */
export const AdminSettlementParams = z.object({
  settlement_batch_id: batchId.meta({ description: "The batch's `id` (from `GET /admin/settlements` or a run); one that names no batch is 404 BATCH_NOT_FOUND", example: BATCH_ID_EXAMPLE }),
});
