/**
 * The HTTP API: one Lambda per route of `infra/routes.ts` (the table the local runtime serves too), plus the
 * `$default` route for paths no route serves. Each function gets exactly the access its route declares. A route
 * marked `functionUrl` (the processor webhook) also gets a Lambda function URL, auth NONE. The settlement schedule,
 * which is no route, is the settlement stack's.
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
import type { RailSettings, SettlementCutoff } from './deploy-settings';
import { serviceFunction } from './service-function';
import { grantTableAccess } from './table-access';

/**
 * The HTTP function that runs settlement and so needs the deploy-time cutoff (the scheduled run, in the settlement
 * stack, gets it too). By name: the cutoff is a setting, not an access the route table declares.
 */
const SETTLEMENT_RUN_FUNCTION = 'settlements-run';

/** A payout function's view of the rails: the secret holding their keys (by ARN, never the keys) and their base URLs. */
const railEnvironment = (railsSecret: ISecret, rails: RailSettings): Record<string, string> => ({
  RAILS_SECRET_ARN: railsSecret.secretArn,
  ...(rails.railAApiBase === undefined ? {} : { RAIL_A_API_BASE: rails.railAApiBase }),
  ...(rails.railBApiBase === undefined ? {} : { RAIL_B_API_BASE: rails.railBApiBase }),
});

export interface ApiStackProps extends StackProps {
  table: ITableV2;
  secretsKey: IKey;
  processorSecret: ISecret;
  /** The key that seals paging cursors; only list functions may read it. */
  cursorSecret: ISecret;
  /** The payout rails' keys; only functions whose route declares `railKeys` may read it. */
  railsSecret: ISecret;
  /** Where the rails answer (https); an unset one's payouts answer failed ("rail A is not configured"). */
  rails: RailSettings;
  /** Which succeeded transactions a run settles (decisions.md §1): for the function that runs settlement. */
  settlementCutoff: SettlementCutoff;
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
    const { table, secretsKey, processorSecret, cursorSecret, railsSecret, rails, settlementCutoff, adminAuth } = props;
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
        ...(access.railKeys === true ? railEnvironment(railsSecret, rails) : {}),
        ...(name === SETTLEMENT_RUN_FUNCTION ? { SETTLEMENT_CUTOFF: settlementCutoff } : {}),
      },
    });
    if (access.table !== undefined) grantTableAccess(table, fn, access.table);
    if (access.kms?.includes('encrypt')) secretsKey.grant(fn, 'kms:GenerateDataKey');
    if (access.kms?.includes('decrypt')) secretsKey.grantDecrypt(fn);
    if (access.processorKeys === true) processorSecret.grantRead(fn);
    if (access.cursorKey === true) cursorSecret.grantRead(fn);
    if (access.railKeys === true) railsSecret.grantRead(fn);
    return fn;
  }
}
