/** A partner and one of its clients, read together: the payee of a payment. */
import type { Client, Partner } from '../domain/partner';
import { batchGetAll } from './batch-get';
import { toClient } from './clients';
import { keys } from './keys';
import { toPartner } from './partners';

/** One strongly consistent BatchGetItem for both (either may be missing). */
export async function getPayee(partnerId: string, clientId: string): Promise<{ partner: Partner | undefined; client: Client | undefined }> {
  const partnerKey = keys.partner(partnerId);
  const clientKey = keys.client(partnerId, clientId);
  const found = await batchGetAll([partnerKey, clientKey]);
  const item = (key: { pk: string; sk: string }) => found.find((candidate) => candidate.pk === key.pk && candidate.sk === key.sk);
  const partnerItem = item(partnerKey);
  const clientItem = item(clientKey);
  return {
    partner: partnerItem === undefined ? undefined : toPartner(partnerItem),
    client: clientItem === undefined ? undefined : toClient(clientItem),
  };
}
