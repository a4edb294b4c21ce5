/**
 * Who is calling and under which idempotency scope: types every layer below the handlers shares, so that use
 * cases and repositories never import the HTTP layer (arrows run functions -> http/use cases -> domain).
 * Pure: no I/O.
 */
import { errors } from './errors';
import type { Partner } from './partner';

/** Who is calling, as established by the chain's authentication step. */
export type Caller =
  | { kind: 'anonymous' }
  | { kind: 'admin'; subject: string }
  | { kind: 'partner'; keyId: string; partner: Partner }
  | { kind: 'platform'; keyId: string };

/**
 * The idempotency scope a partner mutation runs under (decisions.md §4): the partner it acts for, the route,
 * the caller's `idempotency-key`, and the SHA-256 of the raw body; and the `nonce` of the key's record (random,
 * kept by the record for its 24 hours, never shown). Use cases key their attempts by it.
 */
export interface IdempotencyScope {
  owner: string;
  endpoint: string;
  idempotencyKey: string;
  fingerprint: string;
  nonce: string;
}

/**
 * A partner-scoped key acts only for its own partner: a body or query `partner_id` naming another partner is
 * 403 API_KEY_SCOPE_FORBIDDEN (decisions.md §5). A platform key may name any partner.
 */
export function assertActsFor(caller: Caller, partnerId: string | undefined): void {
  if (caller.kind === 'partner' && partnerId !== undefined && partnerId !== caller.partner.partnerId) {
    throw errors.apiKeyScopeForbidden();
  }
}

/** The partner of a partner-scoped caller; routes that act for the key's own partner refuse other callers (403). */
export function partnerOf(caller: Caller): Partner {
  if (caller.kind !== 'partner') throw errors.apiKeyScopeForbidden('This route needs a partner-scoped API key');
  return caller.partner;
}
