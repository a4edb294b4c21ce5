/**
 * Reads of partners and their clients, shared by every use case (and the chain's access steps) that looks one up:
 * the DynamoDB adapters (`lib/store/partners.ts`, `clients.ts`, `payees.ts`) implement them, each read strongly
 * consistent where a write depends on it. `undefined` is "no such partner" (or client): the caller decides
 * whether that is a 404 or nothing to do.
 */
import type { Client, Partner } from '../../domain/partner';

export interface PartnerReader {
  getPartner(partnerId: string): Promise<Partner | undefined>;
}

export interface ClientReader {
  getClient(partnerId: string, clientId: string): Promise<Client | undefined>;
}

/** A partner and one of its clients, read together (either may be missing). */
export interface PayeeReader {
  getPayee(partnerId: string, clientId: string): Promise<{ partner: Partner | undefined; client: Client | undefined }>;
}
