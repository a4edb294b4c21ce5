import { beforeAll, describe, expect, it } from '@jest/globals';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { ApiStack } from '../../infra/aws/api-stack';
import { StatefulStack } from '../../infra/aws/stateful-stack';
import { API_PREFIX, fallbackRoute, routeKey, routes } from '../../lib/routes';
import { GLOBAL_INDEXES } from '../../lib/store/table';

let stateful: Template;
let api: Template;

beforeAll(() => {
  const app = new App();
  const statefulStack = new StatefulStack(app, 'Stateful');
  const apiStack = new ApiStack(app, 'Api', {
    table: statefulStack.table,
    secretsKey: statefulStack.secretsKey,
    processorSecret: statefulStack.processorSecret,
    cursorSecret: statefulStack.cursorSecret,
    railsSecret: statefulStack.railsSecret,
    rails: { railAApiBase: 'https://rail-a.example/v1', railBApiBase: 'https://rail-b.example/v1' },
    settlementQueue: statefulStack.settlementQueue,
    settlementCutoff: 'now',
    adminAuth: { jwksUrl: 'https://issuer.example/.well-known/jwks.json', issuer: 'https://issuer.example/', audience: 'partner-payments-admin' },
    alarmTopic: statefulStack.alarmTopic,
  });
  stateful = Template.fromStack(statefulStack);
  api = Template.fromStack(apiStack);
}, 120_000);

describe('stateful stack', () => {
  it('has one table with the single-table keys, every GSI, TTL, PITR and deletion protection', () => {
    stateful.resourceCountIs('AWS::DynamoDB::GlobalTable', 1);
    stateful.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      GlobalSecondaryIndexes: GLOBAL_INDEXES.map((index) =>
        Match.objectLike({
          IndexName: index.indexName,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
          Projection:
            typeof index.projection === 'object'
              ? { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.projection.include] }
              : { ProjectionType: index.projection ?? 'ALL' },
        }),
      ),
      Replicas: [
        Match.objectLike({
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          DeletionProtectionEnabled: true,
        }),
      ],
    });
    stateful.hasResource('AWS::DynamoDB::GlobalTable', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
  });

  it('has a rotating KMS key for the secrets, retained on deletion', () => {
    stateful.hasResource('AWS::KMS::Key', { Properties: { EnableKeyRotation: true }, DeletionPolicy: 'Retain' });
  });

  it('has a retained Secrets Manager secret for the processor keys', () => {
    stateful.hasResource('AWS::SecretsManager::Secret', { DeletionPolicy: 'Retain' });
  });

  it('has a retained placeholder secret for the rail keys, in the shape lib/payouts/rail-keys.ts reads (the operator fills it in)', () => {
    const secrets = Object.entries(stateful.findResources('AWS::SecretsManager::Secret')).filter(([logicalId]) => logicalId.startsWith('RailKeys'));

    expect(secrets).toHaveLength(1);
    expect(secrets[0]?.[1]).toMatchObject({ DeletionPolicy: 'Retain' });
    const template = secrets[0]?.[1].Properties.GenerateSecretString.SecretStringTemplate as string;
    expect(JSON.parse(template)).toEqual({ rail_a_api_key: '', rail_b_api_key: '' });
  });

  it('generates the cursor-sealing key as a secret of its own, retained (a new key would void every cursor)', () => {
    const secrets = Object.entries(stateful.findResources('AWS::SecretsManager::Secret')).filter(([logicalId]) => logicalId.startsWith('CursorKey'));
    expect(secrets).toHaveLength(1);
    expect(secrets[0]?.[1]).toMatchObject({
      DeletionPolicy: 'Retain',
      Properties: { GenerateSecretString: { PasswordLength: 64, ExcludePunctuation: true } },
    });
  });
});

describe('stateful stack by stage', () => {
  const statefulTemplate = (props: ConstructorParameters<typeof StatefulStack>[2]) => Template.fromStack(new StatefulStack(new App(), 'Stateful', props));

  it('in prod, retains the table (deletion protection on), the key, every secret and the dead letters', () => {
    // Act
    const prod = statefulTemplate({ stage: 'prod' });

    // Assert
    prod.hasResource('AWS::DynamoDB::GlobalTable', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: { Replicas: [Match.objectLike({ DeletionProtectionEnabled: true })] },
    });
    for (const type of ['AWS::KMS::Key', 'AWS::SecretsManager::Secret']) {
      expect(Object.values(prod.findResources(type)).map((resource) => resource.DeletionPolicy)).toEqual(expect.arrayContaining(['Retain']));
      expect(Object.values(prod.findResources(type)).every((resource) => resource.DeletionPolicy === 'Retain')).toBe(true);
    }
    prod.hasResource('AWS::SQS::Queue', { Properties: { MessageRetentionPeriod: 14 * 24 * 3600 }, DeletionPolicy: 'Retain' });
  });

  it('in dev, deletes the table (no deletion protection), the key, the secrets and the queues with the stack', () => {
    // Act
    const dev = statefulTemplate({ stage: 'dev' });

    // Assert
    dev.hasResource('AWS::DynamoDB::GlobalTable', {
      DeletionPolicy: 'Delete',
      Properties: { Replicas: [Match.objectLike({ DeletionProtectionEnabled: false })] },
    });
    dev.hasResource('AWS::KMS::Key', { DeletionPolicy: 'Delete', Properties: { PendingWindowInDays: 7 } });
    for (const type of ['AWS::SecretsManager::Secret', 'AWS::SQS::Queue']) {
      const policies = Object.values(dev.findResources(type)).map((resource) => resource.DeletionPolicy);
      expect(policies.length).toBeGreaterThan(0);
      expect(policies.every((policy) => policy === 'Delete')).toBe(true);
    }
  });

  it('keeps a production stateful stack when the construct is built without a stage (the app requires one)', () => {
    statefulTemplate(undefined).hasResource('AWS::DynamoDB::GlobalTable', { DeletionPolicy: 'Retain' });
  });

  it('has one alarm topic, TLS only, with an email subscription only when alarmEmail is given', () => {
    // Act
    const withEmail = statefulTemplate({ stage: 'prod', alarmEmail: 'oncall@example.com' });
    const withoutEmail = statefulTemplate({ stage: 'prod' });

    // Assert
    withEmail.resourceCountIs('AWS::SNS::Topic', 1);
    withEmail.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.com' });
    withEmail.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
    withoutEmail.resourceCountIs('AWS::SNS::Topic', 1);
    withoutEmail.resourceCountIs('AWS::SNS::Subscription', 0);
  });
});

describe('API stack', () => {
  it('has one Node 22 function per route plus the $default function', () => {
    const functions = api.findResources('AWS::Lambda::Function', { Properties: { Runtime: 'nodejs22.x' } });
    expect(Object.keys(functions)).toHaveLength(new Set(routes.map((route) => route.name)).size + 1);
    for (const name of [...routes.map((route) => route.name), fallbackRoute.name]) {
      expect(Object.keys(functions).some((logicalId) => logicalId.startsWith(`Fn${name.replace(/-/g, '')}`))).toBe(true);
    }
  });

  it('routes every entry of the route table, and $default', () => {
    for (const route of routes) api.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: routeKey(route) });
    api.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: '$default' });
    api.resourceCountIs('AWS::ApiGatewayV2::Route', routes.length + 1);
  });

  it('runs every function in the aws runtime against the stateful table', () => {
    const functions = Object.values(api.findResources('AWS::Lambda::Function', { Properties: { Runtime: 'nodejs22.x' } }));
    for (const fn of functions) {
      // SERVICE_NAME is Powertools' service, the `service` dimension the payout-failure alarm watches.
      expect(fn.Properties.Environment.Variables).toMatchObject({ SVC_RUNTIME: 'aws', TABLE_NAME: expect.anything(), SERVICE_NAME: 'partner-payments', LOG_LEVEL: 'INFO' });
      expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
    }
  });

  type Statement = { Action: string | string[]; Resource: unknown };

  /** The statements of one route's function's role policy. */
  function statementsOf(name: string): Statement[] {
    const prefix = `Fn${name.replace(/-/g, '')}ServiceRoleDefaultPolicy`;
    const policies = Object.entries(api.findResources('AWS::IAM::Policy')).filter(([logicalId]) => logicalId.startsWith(prefix));
    return policies.flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Statement[]);
  }

  /** The actions granted to one route's function, from its role's policy. */
  const actionsOf = (name: string): string[] => statementsOf(name).flatMap((statement) => [statement.Action].flat());

  /** Whether a function may read the stateful stack's secret whose logical id starts with `secretId`. */
  const readsSecret = (name: string, secretId: string) =>
    statementsOf(name).some(
      (statement) => [statement.Action].flat().includes('secretsmanager:GetSecretValue') && JSON.stringify(statement.Resource).includes(secretId),
    );

  /** Whether a function may send to the stateful stack's settlement continuation queue. */
  const sendsToSettlementQueue = (name: string) =>
    statementsOf(name).some(
      (statement) => [statement.Action].flat().includes('sqs:SendMessage') && JSON.stringify(statement.Resource).includes('SettlementContinuationQueue'),
    );

  it('grants each function exactly the table, KMS, secret and queue access its route declares (least privilege)', () => {
    for (const route of [...routes, { ...fallbackRoute, method: 'ANY', path: '$default' }]) {
      const actions = actionsOf(route.name);
      const writes = actions.filter((action) => /^dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem)$/.test(action));
      const reads = actions.filter((action) => /^dynamodb:(GetItem|Query)$/.test(action));
      const writing = ['items', 'settle', 'readWrite'].includes(route.access.table ?? '');
      expect({ route: route.name, writes: writes.length > 0 }).toEqual({ route: route.name, writes: writing });
      expect({ route: route.name, reads: reads.length > 0 }).toEqual({ route: route.name, reads: route.access.table === 'read' || writing });
      expect({ route: route.name, batchWrites: actions.includes('dynamodb:BatchWriteItem') }).toEqual({ route: route.name, batchWrites: route.access.table === 'settle' });
      expect(actions.includes('dynamodb:Scan') && route.access.table === undefined).toBe(false);
      expect({ route: route.name, kmsGenerate: actions.includes('kms:GenerateDataKey') }).toEqual({
        route: route.name,
        kmsGenerate: route.access.kms?.includes('encrypt') ?? false,
      });
      expect({ route: route.name, kmsDecrypt: actions.includes('kms:Decrypt') }).toEqual({
        route: route.name,
        kmsDecrypt: route.access.kms?.includes('decrypt') ?? false,
      });
      expect({ route: route.name, processorKeys: readsSecret(route.name, 'ProcessorKeys') }).toEqual({
        route: route.name,
        processorKeys: route.access.processorKeys === true,
      });
      expect({ route: route.name, cursorKey: readsSecret(route.name, 'CursorKey') }).toEqual({
        route: route.name,
        cursorKey: route.access.cursorKey === true,
      });
      expect({ route: route.name, railKeys: readsSecret(route.name, 'RailKeys') }).toEqual({
        route: route.name,
        railKeys: route.access.railKeys === true,
      });
      expect({ route: route.name, settlementQueue: sendsToSettlementQueue(route.name) }).toEqual({
        route: route.name,
        settlementQueue: route.access.settlementQueue === true,
      });
    }
  });

  it('routes partner mutations to functions that may decrypt HMAC secrets and write items (never delete: an idempotency key is released by an update), and reads to read-only functions', () => {
    expect(routes.find((route) => route.name === 'clients-create')?.access).toEqual({ table: 'items', kms: ['decrypt'] });
    expect(routes.find((route) => route.name === 'clients-list')?.access).toEqual({ table: 'read', cursorKey: true });
    expect(routes.find((route) => route.name === 'transactions-list')?.access).toEqual({ table: 'read', cursorKey: true });
    for (const name of ['transactions-checkout-intent', 'transactions-checkout-intent-v2', 'transactions-attach-intent']) {
      expect(routes.find((route) => route.name === name)?.access).toEqual({ table: 'items', kms: ['decrypt'], processorKeys: true });
    }
  });

  it('lets the public processor webhook read and transactionally write items, but never scan, delete or batch-write', () => {
    const actions = actionsOf('processor-webhook').filter((action) => action.startsWith('dynamodb:'));

    // BatchGetItem: the fee split of a succeeded payment reads the payee's partner and client in one call.
    expect(actions.sort()).toEqual(['dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
  });

  it('lets the public health function describe the table and nothing else: no item, no secret', () => {
    const actions = actionsOf('health').filter((action) => !action.startsWith('xray:'));

    expect(actions).toEqual(['dynamodb:DescribeTable']);
  });

  it('gives only the processor-calling functions the processor secret, by ARN, never the keys themselves', () => {
    const functions = Object.entries(api.findResources('AWS::Lambda::Function', { Properties: { Runtime: 'nodejs22.x' } }));
    const withSecret = functions.filter(([, fn]) => fn.Properties.Environment.Variables.PROCESSOR_SECRET_ARN !== undefined).map(([id]) => id);
    expect(withSecret.sort()).toEqual(
      functions.map(([id]) => id).filter((id) => /^Fn(transactionscheckoutintent|transactionscheckoutintentv2|transactionsattachintent|brandingpacket|processorwebhook)[A-F0-9]{8}$/.test(id)).sort(),
    );
    for (const [, fn] of functions) expect(Object.keys(fn.Properties.Environment.Variables)).not.toContain('PROCESSOR_SECRET_KEY');
  });

  it('lets only the list functions read the cursor-sealing key, and gives them its ARN', () => {
    const allNames = [...new Set([...routes.map((route) => route.name), fallbackRoute.name])];
    // A partner's webhook endpoints (at most 20) are listed whole, without paging: no cursor to seal.
    const lists = allNames.filter((name) => name.endsWith('-list') && name !== 'admin-webhook-endpoints-list');
    const functions = Object.entries(api.findResources('AWS::Lambda::Function', { Properties: { Runtime: 'nodejs22.x' } }));
    const withArn = functions.filter(([, fn]) => fn.Properties.Environment.Variables.CURSOR_SECRET_ARN !== undefined).map(([id]) => id);

    expect(lists.sort()).toEqual([
      'admin-api-keys-list',
      'admin-audit-events-list',
      'admin-balances-list',
      'admin-partner-api-keys-list',
      'admin-partners-list',
      'admin-settlements-list',
      'admin-transactions-list',
      'admin-webhook-deliveries-list',
      'balances-list',
      'clients-list',
      'settlements-list',
      'transactions-list',
    ]);
    expect(allNames.filter((name) => readsSecret(name, 'CursorKey')).sort()).toEqual(lists);
    expect(withArn.sort()).toEqual(functions.map(([id]) => id).filter((id) => lists.some((name) => id.startsWith(`Fn${name.replace(/-/g, '')}`))).sort());
  });

  /** The logical id of the function the API route `key` (e.g. `POST /api/v1/settlements/run`) integrates. */
  function functionBehind(key: string): string | undefined {
    const route = Object.values(api.findResources('AWS::ApiGatewayV2::Route')).find((resource) => resource.Properties.RouteKey === key);
    const integrationId = JSON.stringify(route?.Properties.Target).match(/"Ref":"([^"]+)"/)?.[1];
    const integration = integrationId === undefined ? undefined : api.findResources('AWS::ApiGatewayV2::Integration')[integrationId];
    return (integration?.Properties.IntegrationUri as { 'Fn::GetAtt'?: string[] } | undefined)?.['Fn::GetAtt']?.[0];
  }

  it('serves the four settlement routes, each from its own function', () => {
    expect(functionBehind('POST /api/v1/settlements/run')).toMatch(/^Fnsettlementsrun[A-F0-9]{8}$/);
    expect(functionBehind('GET /api/v1/settlements')).toMatch(/^Fnsettlementslist[A-F0-9]{8}$/);
    expect(functionBehind('POST /api/v1/settlements/pay')).toMatch(/^Fnsettlementspay[A-F0-9]{8}$/);
    expect(functionBehind('GET /api/v1/settlements/{id}/report.csv')).toMatch(/^Fnsettlementsreport[A-F0-9]{8}$/);
  });

  it('lets only the payout functions (the partner and the admin route) read the rail keys, and gives only them the secret ARN and the rails’ base URLs', () => {
    // Arrange
    const functions = Object.entries(api.findResources('AWS::Lambda::Function', { Properties: { Runtime: 'nodejs22.x' } }));
    const payIds = functions.map(([id]) => id).filter((id) => /^Fn(admin)?settlementspay[A-F0-9]{8}$/.test(id));
    const railKeysPolicies = Object.entries(api.findResources('AWS::IAM::Policy'))
      .filter(([, policy]) => JSON.stringify(policy.Properties.PolicyDocument).includes('RailKeys'))
      .map(([id]) => id);

    // Assert: the payout functions' policies alone name the secret
    expect(payIds).toHaveLength(2);
    expect(railKeysPolicies.map((id) => id.replace(/[A-F0-9]{8}$/, '')).sort()).toEqual(['FnadminsettlementspayServiceRoleDefaultPolicy', 'FnsettlementspayServiceRoleDefaultPolicy']);
    for (const [id, fn] of functions) {
      const variables = fn.Properties.Environment.Variables as Record<string, unknown>;
      const railVariables = Object.keys(variables).filter((name) => name.startsWith('RAIL')).sort();
      expect({ id, railVariables }).toEqual({ id, railVariables: payIds.includes(id) ? ['RAILS_SECRET_ARN', 'RAIL_A_API_BASE', 'RAIL_B_API_BASE'] : [] });
    }
    for (const payId of payIds) {
      expect(functions.find(([id]) => id === payId)?.[1].Properties.Environment.Variables).toMatchObject({
        RAIL_A_API_BASE: 'https://rail-a.example/v1',
        RAIL_B_API_BASE: 'https://rail-b.example/v1',
        RAILS_SECRET_ARN: { 'Fn::ImportValue': expect.stringContaining('RailKeys') },
      });
    }
  });

  it('gives the deploy-time settlement cutoff to the function that runs settlement, and to no other', () => {
    const functions = Object.entries(api.findResources('AWS::Lambda::Function', { Properties: { Runtime: 'nodejs22.x' } }));
    const withCutoff = functions.filter(([, fn]) => fn.Properties.Environment.Variables.SETTLEMENT_CUTOFF !== undefined);

    expect(withCutoff.map(([id]) => id)).toEqual([expect.stringMatching(/^Fnsettlementsrun[A-F0-9]{8}$/)]);
    expect(withCutoff[0]?.[1].Properties.Environment.Variables.SETTLEMENT_CUTOFF).toBe('now');
  });

  it('lets only the two settlement run functions (the partner and the admin route) send to the continuation queue, and gives only them its URL', () => {
    // Arrange
    const functions = Object.entries(api.findResources('AWS::Lambda::Function', { Properties: { Runtime: 'nodejs22.x' } }));
    const runIds = functions.map(([id]) => id).filter((id) => /^Fn(admin)?settlementsrun[A-F0-9]{8}$/.test(id));
    const senders = [...new Set([...routes.map((route) => route.name), fallbackRoute.name])].filter(sendsToSettlementQueue);
    const withUrl = functions.filter(([, fn]) => fn.Properties.Environment.Variables.SETTLEMENT_QUEUE_URL !== undefined).map(([id]) => id);

    // Assert
    expect(routes.filter((route) => route.access.settlementQueue === true).map((route) => route.name).sort()).toEqual(['admin-settlements-run', 'settlements-run']);
    expect(senders.sort()).toEqual(['admin-settlements-run', 'settlements-run']);
    expect(runIds).toHaveLength(2);
    expect(withUrl.sort()).toEqual(runIds.sort());
    for (const runId of runIds) {
      expect(functions.find(([id]) => id === runId)?.[1].Properties.Environment.Variables.SETTLEMENT_QUEUE_URL).toEqual({
        'Fn::ImportValue': expect.stringContaining('SettlementContinuationQueue'),
      });
    }
  });

  it('serves the branding packet and its CORS preflight from one function, and no preflight for checkout-intent-v2', () => {
    api.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: 'OPTIONS /api/v1/branding/packet' });
    expect(Object.values(api.findResources('AWS::ApiGatewayV2::Route')).map((route) => route.Properties.RouteKey)).not.toContain(
      'OPTIONS /api/v1/transactions/checkout-intent-v2',
    );
    const apis = Object.values(api.findResources('AWS::ApiGatewayV2::Api'));
    expect(apis).toHaveLength(1);
    expect(apis[0]?.Properties.CorsConfiguration).toBeUndefined();
  });

  it('gives exactly one function a function URL, auth NONE: the processor webhook, which also serves its API route', () => {
    // Arrange
    const urls = Object.values(api.findResources('AWS::Lambda::Url'));
    const webhookFunctions = Object.keys(api.findResources('AWS::Lambda::Function')).filter((id) => /^Fnprocessorwebhook[A-F0-9]{8}$/.test(id));

    // Assert: one URL, unauthenticated (the processor signs its events), on the processor webhook function
    expect(webhookFunctions).toHaveLength(1);
    expect(urls).toHaveLength(1);
    expect(urls[0]?.Properties).toMatchObject({ AuthType: 'NONE', TargetFunctionArn: { 'Fn::GetAtt': [webhookFunctions[0], 'Arn'] } });
    // Anyone may invoke it through the URL (and only through the URL or the API)
    api.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunctionUrl',
      FunctionName: { 'Fn::GetAtt': [webhookFunctions[0], 'Arn'] },
      Principal: '*',
      FunctionUrlAuthType: 'NONE',
    });
    // ... which since October 2025 also takes lambda:InvokeFunction, limited to invocations through the URL
    api.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: { 'Fn::GetAtt': [webhookFunctions[0], 'Arn'] },
      Principal: '*',
      InvokedViaFunctionUrl: true,
    });
    api.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: 'POST /api/v1/webhooks/processor' });
  });

  it('passes the KMS key and admin token settings to the functions', () => {
    const functions = Object.values(api.findResources('AWS::Lambda::Function', { Properties: { Runtime: 'nodejs22.x' } }));
    for (const fn of functions) {
      expect(fn.Properties.Environment.Variables).toMatchObject({
        KMS_KEY_ID: expect.anything(),
        ADMIN_JWKS_URL: 'https://issuer.example/.well-known/jwks.json',
        ADMIN_JWT_ISSUER: 'https://issuer.example/',
        ADMIN_JWT_AUDIENCE: 'partner-payments-admin',
      });
    }
  });

  it('grants no wildcard action (no `*`, no `dynamodb:*`) in any function’s policy', () => {
    const statements = Object.values(api.findResources('AWS::IAM::Policy')).flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);

    expect(statements.length).toBeGreaterThan(0);
    for (const action of statements.flatMap((statement) => [statement.Action].flat())) expect(action).not.toMatch(/(^|:)\*$/);
  });

  it('throttles the stage and writes an access log', () => {
    api.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: Match.anyValue(), ThrottlingBurstLimit: Match.anyValue() },
      AccessLogSettings: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('\\$context.requestId') },
    });
    const stage = Object.values(api.findResources('AWS::ApiGatewayV2::Stage'))[0];
    expect(stage?.Properties.DefaultRouteSettings.ThrottlingRateLimit).toBeGreaterThan(0);
    expect(stage?.Properties.DefaultRouteSettings.ThrottlingBurstLimit).toBeGreaterThanOrEqual(stage?.Properties.DefaultRouteSettings.ThrottlingRateLimit as number);
  });

  it('puts a JWT authorizer (the admin token issuer and audience) on every admin route, and on no other', () => {
    // Arrange
    const authorizers = Object.entries(api.findResources('AWS::ApiGatewayV2::Authorizer'));
    const routeResources = Object.values(api.findResources('AWS::ApiGatewayV2::Route'));
    const isAdmin = (key: string) => key.split(' ')[1]?.startsWith(`${API_PREFIX}/admin/`) === true;

    // Assert
    expect(authorizers).toHaveLength(1);
    expect(authorizers[0]?.[1].Properties).toMatchObject({
      AuthorizerType: 'JWT',
      IdentitySource: ['$request.header.Authorization'],
      JwtConfiguration: { Issuer: 'https://issuer.example/', Audience: ['partner-payments-admin'] },
    });
    const adminKeys = routes.map(routeKey).filter(isAdmin);
    expect(adminKeys.length).toBeGreaterThanOrEqual(14);
    for (const route of routeResources) {
      const key = route.Properties.RouteKey as string;
      expect({ key, auth: route.Properties.AuthorizationType ?? 'NONE', authorizer: route.Properties.AuthorizerId }).toEqual(
        isAdmin(key) ? { key, auth: 'JWT', authorizer: { Ref: authorizers[0]?.[0] } } : { key, auth: 'NONE', authorizer: undefined },
      );
    }
  });

  it('puts no authorizer anywhere without admin token settings (the admin functions then refuse to start)', () => {
    // Act
    const app = new App();
    const statefulStack = new StatefulStack(app, 'Stateful');
    const bare = Template.fromStack(
      new ApiStack(app, 'Api', {
        table: statefulStack.table,
        secretsKey: statefulStack.secretsKey,
        processorSecret: statefulStack.processorSecret,
        cursorSecret: statefulStack.cursorSecret,
        railsSecret: statefulStack.railsSecret,
        rails: { railAApiBase: undefined, railBApiBase: undefined },
        settlementQueue: statefulStack.settlementQueue,
        settlementCutoff: 'day_boundary',
        alarmTopic: statefulStack.alarmTopic,
      }),
    );

    // Assert
    bare.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 0);
    bare.resourceCountIs('AWS::ApiGatewayV2::Route', routes.length + 1);
  }, 120_000);

  /** The alarm topic's ARN, as the API stack imports it. */
  const alarmActions = [{ 'Fn::ImportValue': Match.stringLikeRegexp('AlarmTopic') }];

  it('alarms on the API’s 5xx rate, notifying the alarm topic', () => {
    const alarms = Object.values(api.findResources('AWS::CloudWatch::Alarm')).filter((alarm) => JSON.stringify(alarm.Properties.Metrics ?? []).includes('"5xx"'));

    expect(alarms).toHaveLength(1);
    expect(JSON.stringify(alarms[0]?.Properties.Metrics)).toContain('"Count"');
    expect(JSON.stringify(alarms[0]?.Properties.Metrics)).toContain('AWS/ApiGateway');
    // A rate only over at least 10 requests: one 5xx among a handful pages no one
    expect(alarms[0]?.Properties).toMatchObject({
      Metrics: expect.arrayContaining([expect.objectContaining({ Expression: 'IF(requests >= 10, 100 * errors / requests, 0)' })]),
      Threshold: 5,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [{ 'Fn::ImportValue': expect.stringMatching(/AlarmTopic/) }],
    });
  });

  it('alarms on the processor webhook function URL’s 5xx and 4xx rates and its throttles (its requests never reach the API’s metrics)', () => {
    // Arrange
    const webhookId = Object.keys(api.findResources('AWS::Lambda::Function')).find((id) => /^Fnprocessorwebhook[A-F0-9]{8}$/.test(id));
    const urlMetric = (metricName: string) =>
      Match.objectLike({
        MetricStat: Match.objectLike({
          Metric: { Namespace: 'AWS/Lambda', MetricName: metricName, Dimensions: [{ Name: 'FunctionName', Value: { Ref: webhookId } }] },
          Stat: 'Sum',
          Period: 300,
        }),
      });

    // Assert
    expect(webhookId).toBeDefined();
    api.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: 'IF(requests >= 10, 100 * errors / requests, 0)' }),
        urlMetric('Url5xxCount'),
        urlMetric('UrlRequestCount'),
      ]),
      Threshold: 5,
      EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: alarmActions,
    });
    // Refusals (a wrong webhook secret refuses every event): half its requests, 15 minutes in a row
    api.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: Match.arrayWith([urlMetric('Url4xxCount'), urlMetric('UrlRequestCount')]),
      Threshold: 50,
      EvaluationPeriods: 3,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: alarmActions,
    });
    // Throttled at its reserved concurrency
    api.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Throttles',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: webhookId } }],
      Threshold: 1,
      AlarmActions: alarmActions,
    });
  });

  it('alarms on any idempotency record that could not be stored or released (the EMF metric the chain counts)', () => {
    api.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'PartnerPayments',
      MetricName: 'IdempotencyRecordFailures',
      Dimensions: [{ Name: 'service', Value: 'partner-payments' }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      AlarmActions: alarmActions,
    });
  });

  it('caps the public processor webhook function’s concurrency (50 by default) and no other API function’s', () => {
    const functions = Object.entries(api.findResources('AWS::Lambda::Function', { Properties: { Runtime: 'nodejs22.x' } }));
    const reserved = functions.filter(([, fn]) => fn.Properties.ReservedConcurrentExecutions !== undefined);

    expect(reserved.map(([id, fn]) => [id, fn.Properties.ReservedConcurrentExecutions])).toEqual([[expect.stringMatching(/^Fnprocessorwebhook[A-F0-9]{8}$/), 50]]);
  });

  it('alarms on any failed payout (the EMF metric the pay use case counts, in the service’s namespace and dimension)', () => {
    api.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'PartnerPayments',
      MetricName: 'SettlementPayoutsFailed',
      Dimensions: [{ Name: 'service', Value: 'partner-payments' }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: alarmActions,
    });
  });
});
