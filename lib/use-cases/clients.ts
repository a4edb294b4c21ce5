/** Partner use cases: registering and listing the partner's merchants (POST/GET /clients). */
import { newId } from '../domain/ids';
import { assertClientFeeAllowed, assertPartnerNotSuspended, type Client, type ClientStatus, type Partner } from '../domain/partner';
import * as clients from '../store/clients';

export interface NewClient {
  clientId: string;
  legalName: string;
  status: ClientStatus;
  partnerFeePercentage: number | null;
  partnerFeeFlatUsd: number | null;
}

/**
 * Steps: the partner must not be suspended (403); the fee must not undercut the service fee (400); then one
 * conditional put (409 CLIENT_EXISTS if the partner already has this `client_id`).
 */
export async function registerClient(partner: Partner, input: NewClient): Promise<Client> {
  assertPartnerNotSuspended(partner);
  assertClientFeeAllowed(partner, input.partnerFeePercentage);
  const now = new Date().toISOString();
  return clients.createClient({ id: newId.client(), partnerId: partner.partnerId, ...input, createdAt: now, updatedAt: now });
}

export function listClients(partner: Partner, query: { limit: number; cursor?: string | undefined; status?: ClientStatus | undefined }) {
  assertPartnerNotSuspended(partner);
  return clients.listClients(partner.partnerId, query);
}
