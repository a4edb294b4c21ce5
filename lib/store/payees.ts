/** A partner and one of its clients, read together: the payee of a payment. */
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import type { Client, Partner } from '../domain/partner';
import { toClient } from './clients';
import { documentClient, tableName } from './dynamo';
import { keys } from './keys';
import { toPartner } from './partners';

/** One strongly consistent BatchGetItem for both (either may be missing). */
export async function getPayee(partnerId: string, clientId: string): Promise<{ partner: Partner | undefined; client: Client | undefined }> {
  const partnerKey = keys.partner(partnerId);
  const clientKey = keys.client(partnerId, clientId);
  let pending: Array<Record<string, unknown>> = [{ ...partnerKey }, { ...clientKey }];
  const found: Record<string, unknown>[] = [];
  // BatchGetItem may return some keys unprocessed under load: ask again for those.
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
    const result = await documentClient.send(
      new BatchGetCommand({ RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true } } }),
    );
    found.push(...(result.Responses?.[tableName] ?? []));
    pending = result.UnprocessedKeys?.[tableName]?.Keys ?? [];
    if (attempt >= 5 && pending.length > 0) throw new Error('BatchGetItem left keys unprocessed');
  }
  const item = (key: { pk: string; sk: string }) => found.find((candidate) => candidate.pk === key.pk && candidate.sk === key.sk);
  const partnerItem = item(partnerKey);
  const clientItem = item(clientKey);
  return {
    partner: partnerItem === undefined ? undefined : toPartner(partnerItem),
    client: clientItem === undefined ? undefined : toClient(clientItem),
  };
}
