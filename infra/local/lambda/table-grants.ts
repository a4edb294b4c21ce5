/**
 * IAM's refusal, locally: a DynamoDB call made inside a function's invocation that the function's grant
 * (`infra/shared/table-grants.ts`, what the CDK stacks grant in AWS) does not cover fails with AccessDeniedException, as AWS
 * would fail it. Without this, a missing grant passes every local test and first fails in production. Calls made
 * outside any invocation (the runtime's own setup, a test seeding the table) are not checked: they have no role.
 */
import { DynamoDBServiceException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { actionsOfRequest, queryIndexesOf, TABLE_QUERY, tableActionsOf } from '../../shared/table-grants';
import { invocationUsage, invokedFunctionName } from './adapter';

const MIDDLEWARE_NAME = 'localTableGrants';

/**
 * Checks every call `client` makes inside an invocation against the invoked function's grant, and counts it in
 * the invocation's usage (once per client). A call the SDK retries counts once: it is one call of the code.
 */
export function enforceTableGrants(client: DynamoDBClient): void {
  if (client.middlewareStack.identify().some((entry) => entry.startsWith(`${MIDDLEWARE_NAME} `))) return;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const functionName = invokedFunctionName();
      const usage = invocationUsage();
      if (usage !== undefined) usage.dynamodbCalls++;
      if (functionName !== undefined) {
        const granted = tableActionsOf(functionName) ?? [];
        const refused = actionsOfRequest(context.commandName ?? '', args.input).filter((action) => !(granted as readonly string[]).includes(action));
        if (refused.length > 0) throw accessDenied(functionName, refused[0]!);
        const indexes = queryIndexesOf(functionName);
        const indexName = (args.input as { IndexName?: string }).IndexName;
        if (context.commandName === 'QueryCommand' && indexes !== undefined && !indexes.includes(indexName ?? TABLE_QUERY)) {
          throw accessDenied(functionName, 'Query', indexName === undefined ? 'the table' : `index ${indexName}`);
        }
      }
      return next(args);
    },
    { step: 'initialize', name: MIDDLEWARE_NAME, priority: 'high' },
  );
}

/** The error AWS answers a call the role's policy does not allow (an AccessDeniedException, HTTP 400). */
function accessDenied(functionName: string, action: string, resource = 'the table'): DynamoDBServiceException {
  return new DynamoDBServiceException({
    name: 'AccessDeniedException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message:
      `User: arn:aws:sts::000000000000:assumed-role/${functionName}/local is not authorized to perform: dynamodb:${action} on ${resource} ` +
      `because no identity-based policy allows the dynamodb:${action} action (grant it in infra/shared/table-grants.ts)`,
  });
}
