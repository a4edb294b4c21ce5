/** Request schemas of the settlement routes (interface-spec.md; decisions.md §7, §9). */
import * as z from 'zod';
import { BATCH_STATUSES } from '../domain/settlement';
import { PageQuery } from './schemas';

const partnerId = z.string().min(1).max(64);
const clientId = z.string().min(1).max(128);
/** A batch id as callers send it: any text of sane length; one that names no batch is 404 BATCH_NOT_FOUND (the spec's "invalid batch id"). */
const batchId = z.string().min(1).max(128);

/** `POST /settlements/run`: optional `partner_id` and `client_id` query parameters; no body. */
export const SettlementRunQuery = z.object({ partner_id: partnerId.optional(), client_id: clientId.optional() });

export const SettlementListQuery = PageQuery.extend({
  status: z.enum(BATCH_STATUSES).optional(),
  client_id: clientId.optional(),
  partner_id: partnerId.optional(),
});

export const SettlementPayBody = z.strictObject({ settlement_batch_id: batchId });

export const SettlementParams = z.object({ id: batchId });
