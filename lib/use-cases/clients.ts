/** Partner use cases: registering and listing the partner's merchants (POST/GET /clients). */
import { assertActsFor, type Caller, partnerOf } from '../domain/caller';
import { newId } from '../domain/ids';
import type { Page } from '../domain/page';
import { assertClientFeeAllowed, assertPartnerNotSuspended, type Client, type ClientStatus } from '../domain/partner';

/** A partner's merchants in the table (`lib/store/clients.ts`), wired in `lib/composition/clients.ts`. */
export interface ClientStore {
  /** A conditional put: 409 CLIENT_EXISTS when the partner already has this `client_id`. */
  createClient(client: Client): Promise<Client>;
  listClients(partnerId: string, page: { limit: number; cursor?: string | undefined; status?: ClientStatus | undefined }): Promise<Page<Client>>;
}

export interface NewClient {
  clientId: string;
  legalName: string;
  status: ClientStatus;
  partnerFeePercentage: number | null;
  partnerFeeFlatUsdCents: number | null;
}

/**
 * Steps: the caller must be a partner key (403 for a platform key), acting for its own partner (a `partner_id`
 * naming another is 403); the partner must not be suspended (403); the fee must not undercut the service fee
 * (400); then one conditional put (409 CLIENT_EXISTS if the partner already has this `client_id`).
 */
export async function registerClient(clients: ClientStore, caller: Caller, namedPartnerId: string | undefined, input: NewClient): Promise<Client> {
  const partner = partnerOf(caller);
  assertActsFor(caller, namedPartnerId);
  assertPartnerNotSuspended(partner);
  assertClientFeeAllowed(partner, input.partnerFeePercentage);
  const now = new Date().toISOString();
  return clients.createClient({ id: newId.client(), partnerId: partner.partnerId, ...input, createdAt: now, updatedAt: now });
}

/** The caller's own merchants, newest first (the same access rules as {@link registerClient}). */
export function listClients(
  clients: ClientStore,
  caller: Caller,
  query: { partnerId?: string | undefined; limit: number; cursor?: string | undefined; status?: ClientStatus | undefined },
) {
  const partner = partnerOf(caller);
  assertActsFor(caller, query.partnerId);
  assertPartnerNotSuspended(partner);
  return clients.listClients(partner.partnerId, { limit: query.limit, cursor: query.cursor, status: query.status });
}
