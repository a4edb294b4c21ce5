/** Who may act for which partner (decisions.md §5). */
import { errors } from '../domain/errors';
import type { Caller } from '../http/types';

/**
 * A partner-scoped key acts only for its own partner: a body or query `partner_id` naming another partner is
 * 403 API_KEY_SCOPE_FORBIDDEN. A platform key may name any partner.
 */
export function assertActsFor(caller: Caller, partnerId: string | undefined): void {
  if (caller.kind === 'partner' && partnerId !== undefined && partnerId !== caller.partner.partnerId) {
    throw errors.apiKeyScopeForbidden();
  }
}
