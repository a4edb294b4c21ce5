/**
 * The HTTP API: one Lambda per route of `infra/routes.ts` (the table the local runtime serves too), plus the
 * `$default` route for paths no route serves. Each function gets exactly the access its route declares. A route
 * marked `functionUrl` (the processor webhook) also gets a Lambda function URL, auth NONE.
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { HttpApi, HttpMethod, HttpRoute, HttpRouteKey } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { FunctionUrlAuthType } from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';
import { FUNCTION_TIMEOUT_SECONDS, fallbackRoute, routes, type RouteAccess } from '../routes';
import { serviceFunction } from './service-function';

export interface ApiStackProps extends StackProps {
  table: ITableV2;
  secretsKey: IKey;
  processorSecret: ISecret;
  /** The key that seals paging cursors; only list functions may read it. */
  cursorSecret: ISecret;
  /** Admin bearer token verification (decisions.md §2); unset, the admin functions refuse to start. */
  adminAuth?: { jwksUrl: string; issuer: string; audience: string } | undefined;
}

export class ApiStack extends Stack {
  readonly api: HttpApi;

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props);
    this.api = new HttpApi(this, 'HttpApi', { description: 'Partner payments service API (/api/v1)' });

    const functions = new Map<string, NodejsFunction>();
    for (const route of routes) {
      let fn = functions.get(route.name);
      if (fn === undefined) {
        fn = this.createFunction(route.name, route.access, props);
        functions.set(route.name, fn);
        if (route.functionUrl === true) {
          // The processor's webhook endpoint: it authenticates by the event signature, so the URL has no IAM auth.
          const url = fn.addFunctionUrl({ authType: FunctionUrlAuthType.NONE });
          new CfnOutput(this, `FunctionUrl-${route.name}`, { value: url.url });
        }
      }
      new HttpRoute(this, `Route-${route.method}-${route.name}`, {
        httpApi: this.api,
        routeKey: HttpRouteKey.with(route.path, HttpMethod[route.method]),
        integration: new HttpLambdaIntegration(`Integration-${route.method}-${route.name}`, fn),
      });
    }
    const fallback = this.createFunction(fallbackRoute.name, fallbackRoute.access, props);
    new HttpRoute(this, 'Route-default', {
      httpApi: this.api,
      routeKey: HttpRouteKey.DEFAULT,
      integration: new HttpLambdaIntegration('Integration-default', fallback),
    });

    new CfnOutput(this, 'ApiUrl', { value: `${this.api.apiEndpoint}/api/v1` });
  }

  private createFunction(name: string, access: RouteAccess, props: ApiStackProps): NodejsFunction {
    const { table, secretsKey, processorSecret, cursorSecret, adminAuth } = props;
    const fn = serviceFunction(this, name, {
      timeoutSeconds: FUNCTION_TIMEOUT_SECONDS,
      environment: {
        TABLE_NAME: table.tableName,
        KMS_KEY_ID: secretsKey.keyArn,
        ...(adminAuth === undefined
          ? {}
          : { ADMIN_JWKS_URL: adminAuth.jwksUrl, ADMIN_JWT_ISSUER: adminAuth.issuer, ADMIN_JWT_AUDIENCE: adminAuth.audience }),
        ...(access.processorKeys === true ? { PROCESSOR_SECRET_ARN: processorSecret.secretArn } : {}),
        ...(access.cursorKey === true ? { CURSOR_SECRET_ARN: cursorSecret.secretArn } : {}),
      },
    });
    if (access.table === 'describe') table.grant(fn, 'dynamodb:DescribeTable');
    if (access.table === 'read') table.grantReadData(fn);
    if (access.table === 'items') {
      table.grant(fn, 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem');
    }
    if (access.table === 'readWrite') table.grantReadWriteData(fn);
    if (access.kms?.includes('encrypt')) secretsKey.grant(fn, 'kms:GenerateDataKey');
    if (access.kms?.includes('decrypt')) secretsKey.grantDecrypt(fn);
    if (access.processorKeys === true) processorSecret.grantRead(fn);
    if (access.cursorKey === true) cursorSecret.grantRead(fn);
    return fn;
  }
}
