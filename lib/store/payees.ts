/** A partner and one of its clients, read together: the payee of a payment. */
import type { Client, KnownPayee, Partner, PayeeIds } from '../domain/partner';
import { apiKeyFromCopy, randomApiKeyCopy, type StoredApiKey } from './api-keys';
import { batchGetAll } from './batch-get';
import { toClient } from './clients';
import { keys, type TableKey } from './keys';
import { toPartner } from './partners';

/** One strongly consistent BatchGetItem for both (either may be missing). */
export async function getPayee(partnerId: string, clientId: string): Promise<{ partner: Partner | undefined; client: Client | undefined }> {
  const { partner, client } = await readPayee({ partnerId, clientId });
  return { partner, client };
}

/**
 * The API key with the hash `keyHash` and, in the same strongly consistent BatchGetItem, the payee a request's
 * body names: one call where there were three (key, partner, client). The key is read from its copy `copy` (by default
 * one at random); a missing copy is read again from the key item (a second call, only for a key not yet backfilled or
 * an unknown one). The payee is read before the key is checked, but nothing of it is used unless the key may act for
 * that partner (the chain and the payment gate decide).
 */
export async function findApiKeyAndPayee(
  keyHash: string,
  named: PayeeIds,
  copy = randomApiKeyCopy(),
): Promise<{ apiKey: StoredApiKey | undefined; payee: KnownPayee }> {
  const keyItem = keys.apiKeyCopy(keyHash, copy);
  const { found, partner, client } = await readPayee(named, [keyItem]);
  return { apiKey: await apiKeyFromCopy(keyHash, copy, found(keyItem)), payee: { ...named, partner, client } };
}

async function readPayee(named: PayeeIds, alsoRead: TableKey[] = []) {
  const partnerKey = keys.partner(named.partnerId);
  const clientKey = keys.client(named.partnerId, named.clientId);
  const items = await batchGetAll([...alsoRead, partnerKey, clientKey]);
  const found = (key: TableKey) => items.find((candidate) => candidate.pk === key.pk && candidate.sk === key.sk);
  const partnerItem = found(partnerKey);
  const clientItem = found(clientKey);
  return {
    found,
    partner: partnerItem === undefined ? undefined : toPartner(partnerItem),
    client: clientItem === undefined ? undefined : toClient(clientItem),
  };
}
