/** Every page of a Query, in order: for readers that go through a whole key range (no cursor handed out). */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { documentClient } from './dynamo';

export async function* queryPages(input: QueryCommandInput): AsyncGenerator<Record<string, unknown>[]> {
  let startKey = input.ExclusiveStartKey;
  do {
    const page = await documentClient.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey }));
    yield page.Items ?? [];
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
}

/** Every item of a Query. */
export async function queryAll(input: QueryCommandInput): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for await (const page of queryPages(input)) items.push(...page);
  return items;
}
