/** Loads the Lambda functions of `functions/` into this process, as the local runtime's stand-ins for AWS invoke them. */
import { config } from '../../../lib/config';
import { recordCapacity } from './capacity-log';
import { enforceTableGrants } from './table-grants';

/**
 * Imports `functions/<name>.ts` once and returns its `handler`, like a warm Lambda container. The table client
 * its modules share is then held to each function's grant, as IAM holds it in AWS (`table-grants.ts`), and, with
 * `DYNAMODB_CAPACITY_LOG` set, its calls' consumed capacity logged (`capacity-log.ts`).
 */
export function loadFunction<Handler>(name: string): Promise<Handler> {
  let handler = handlers.get(name);
  if (handler === undefined) {
    handler = import(`../../../functions/${name}.ts`).then(async (module: { handler: unknown }) => {
      const { dynamoClient } = await import('../../../lib/store/dynamo');
      enforceTableGrants(dynamoClient);
      if (config.DYNAMODB_CAPACITY_LOG !== undefined) recordCapacity(dynamoClient, config.DYNAMODB_CAPACITY_LOG);
      return module.handler;
    });
    handlers.set(name, handler);
  }
  return handler as Promise<Handler>;
}

const handlers = new Map<string, Promise<unknown>>();
