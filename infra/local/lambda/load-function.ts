/** Loads the Lambda functions of `functions/` into this process, as the local runtime's stand-ins for AWS invoke them. */
import { enforceTableGrants } from './table-grants';

/**
 * Imports `functions/<name>.ts` once and returns its `handler`, like a warm Lambda container. The table client
 * its modules share is then held to each function's grant, as IAM holds it in AWS (`table-grants.ts`).
 */
export function loadFunction<Handler>(name: string): Promise<Handler> {
  let handler = handlers.get(name);
  if (handler === undefined) {
    handler = import(`../../../functions/${name}.ts`).then(async (module: { handler: unknown }) => {
      const { dynamoClient } = await import('../../../lib/store/dynamo');
      enforceTableGrants(dynamoClient);
      return module.handler;
    });
    handlers.set(name, handler);
  }
  return handler as Promise<Handler>;
}

const handlers = new Map<string, Promise<unknown>>();
