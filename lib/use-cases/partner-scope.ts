/**
 * The partner a request acts for, from its caller and the \`partner_id\` it names (decisions.md §7, §9): a partner key
 * its own partner (naming another is 403, \`assertActsFor\`); a platform key or an admin the partner it names, which
 * must exist (404 PARTNER_NOT_FOUND, not an empty answer), or none named: every partner's.
 */
import { assertActsFor, type Caller } from '../domain/caller';
import { errors } from '../domain/errors';
import type { PartnerReader } from './ports/partner-readers';

export async function partnerActedFor(partners: PartnerReader, caller: Caller, named: string | undefined): Promise<string | undefined> {
  assertActsFor(caller, named);
  if (caller.kind === 'partner') return caller.partner.partnerId;
  if (named !== undefined && (await partners.getPartner(named)) === undefined) throw errors.partnerNotFound();
  return named;
}
