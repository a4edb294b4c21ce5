/** Clients (merchants), stored under their partner; `client_id` is unique per partner. */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { errors } from '../domain/errors';
import { toMinorUnits } from '../domain/money';
import { type Client, type ClientStatus, FLAT_FEE_CURRENCY } from '../domain/partner';
import { isConditionFailure } from './conditions';
import { documentClient, tableName } from './dynamo';
import { keys } from './keys';
import { type Page, queryPage, statusFilter } from './paging';

export const toClient = (item: Record<string, unknown>): Client => ({
  id: item.id as string,
  partnerId: item.partnerId as string,
  clientId: item.clientId as string,
  legalName: item.legalName as string,
  status: item.status as ClientStatus,
  partnerFeePercentage: (item.partnerFeePercentage as number | null | undefined) ?? null,
  partnerFeeFlatUsdCents: flatFeeCents(item),
  createdAt: item.createdAt as string,
  updatedAt: item.updatedAt as string,
});

/**
 * The flat fee in cents. Items written before it was kept in cents hold `partnerFeeFlatUsd` in dollars (local
 * data only: nothing from then reached production); they are read exactly, as cents, until none is left.
 */
function flatFeeCents(item: Record<string, unknown>): number | null {
  if (typeof item.partnerFeeFlatUsdCents === 'number') return item.partnerFeeFlatUsdCents;
  if (typeof item.partnerFeeFlatUsd !== 'number') return null;
  const cents = toMinorUnits(item.partnerFeeFlatUsd, FLAT_FEE_CURRENCY);
  if (cents === undefined) throw new RangeError(`Client ${String(item.id)} holds a flat fee in fractions of a cent`);
  return cents;
}

/** Conditional create: a second client with the same `client_id` under the partner is 409 CLIENT_EXISTS. */
export async function createClient(client: Client): Promise<Client> {
  try {
    await documentClient.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.client(client.partnerId, client.clientId),
          ...keys.clientIndex(client.partnerId, client.clientId, client.createdAt),
          entity: 'client',
          ...client,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) throw errors.clientExists();
    throw error;
  }
  return client;
}

export async function getClient(partnerId: string, clientId: string): Promise<Client | undefined> {
  const { Item } = await documentClient.send(
    new GetCommand({ TableName: tableName, Key: keys.client(partnerId, clientId), ConsistentRead: true }),
  );
  return Item === undefined ? undefined : toClient(Item);
}

export function listClients(
  partnerId: string,
  page: { limit: number; cursor?: string | undefined; status?: ClientStatus | undefined },
): Promise<Page<Client>> {
  return queryPage({
    index: 'gsi1',
    partition: keys.clientsOf(partnerId),
    limit: page.limit,
    cursor: page.cursor,
    filter: statusFilter(page.status),
    toItem: toClient,
  });
}
