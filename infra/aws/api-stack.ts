/**
 * The HTTP API: one Lambda per route of `lib/routes.ts` (the table the local runtime serves too), plus the
 * `$default` route for paths no route serves. Each function gets exactly the access its route declares. A route
 * marked `functionUrl` (the processor webhook) also gets a Lambda function URL, auth NONE, and its function a
 * reserved concurrency (`processorWebhookConcurrency`), so a flood on the public URL cannot take the account's whole
 * concurrency. The settlement schedule, which is no route, is the settlement stack's.
 *
 * In front of the functions: a stage-wide throttle and an access log; on the admin routes, when the admin token
 * issuer is configured, a JWT authorizer checking the same issuer and audience as the functions' own check (which
 * stays: the authorizer only turns away a bad token before a function runs). Alarms on the API's 5xx rate, on the
 * function URL's 5xx rate (traffic the API's metrics never see) and on failed payouts notify the alarm topic.
 */
import { CfnOutput, Duration, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { type CfnStage, HttpApi, HttpMethod, HttpRoute, HttpRouteKey } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Alarm, ComparisonOperator, type IMetric, MathExpression, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { FunctionUrlAuthType, type Function } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { API_PREFIX, FUNCTION_TIMEOUT_SECONDS, fallbackRoute, routes, type RouteAccess, type RouteDefinition } from '../../lib/routes';
import { type AdminAuthSettings, type ApiThrottleSettings, DEFAULT_PROCESSOR_WEBHOOK_CONCURRENCY, type RailSettings, type SettlementCutoff } from './deploy-settings';
import { acknowledgeFunctionFindings } from './nag-findings';
import { METRICS_NAMESPACE, SERVICE_NAME } from './observability';
import { serviceFunction } from './service-function';
import { grantTableAccess } from './table-access';

/** The stage throttle when the app gives none (`deploy-settings.ts` reads `apiThrottleRate`, `apiThrottleBurst`). */
const DEFAULT_THROTTLE: ApiThrottleSettings = { rateLimit: 100, burstLimit: 200 };

/** The alarms' period. */
const ALARM_PERIOD = Duration.minutes(5);
/** The 5xx alarms (the API's, a function URL's): at least this percentage of requests answered 5xx in a 5-minute period. */
const SERVER_ERROR_RATE_PERCENT = 5;
/** The processor webhook's 4xx alarm: at least this percentage of its requests refused, three periods in a row. */
const CLIENT_ERROR_RATE_PERCENT = 50;
/** Below this many requests in a period, a rate alarm sees 0 %. */
const RATE_ALARM_MIN_REQUESTS = 10;

/** The admin API (decisions.md §2): everything under `/admin/`. */
const isAdminRoute = (route: Pick<RouteDefinition, 'path'>) => route.path.startsWith(`${API_PREFIX}/admin/`);

/** Why a route has no API Gateway authorizer: the function authenticates the caller itself (cdk-nag AwsSolutions-APIG4). */
const selfAuthenticated = (route: Pick<RouteDefinition, 'name' | 'path'>): string => {
  if (route.name === 'health') return 'The public health check: no caller to authenticate, and it reads no item.';
  if (route.name === 'processor-webhook') return 'The processor webhook: the function verifies the processor’s signature over the raw body before anything else.';
  if (route.name === fallbackRoute.name) return 'The $default route answers 404 or 405 and touches nothing.';
  if (isAdminRoute(route)) return 'No admin token issuer is configured: the admin functions refuse to start (fail closed) until one is.';
  if (route.name === 'branding-packet') return 'The branding packet: the function checks the partner’s API key (its CORS preflight carries none, by the Fetch standard).';
  return 'A partner route: the function checks the partner’s API key and the HMAC signature over the raw body (lib/http), which no API Gateway authorizer can.';
};

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
  /** The settlement continuation queue; only functions whose route declares `settlementQueue` may send to it. */
  settlementQueue: IQueue;
  /** Which succeeded transactions a run settles (decisions.md §1): for the function that runs settlement. */
  settlementCutoff: SettlementCutoff;
  /** Admin bearer token verification (decisions.md §2); unset, the admin functions refuse to start. */
  adminAuth?: AdminAuthSettings | undefined;
  /** The stage-wide throttle; unset, 100 requests per second with bursts of 200. */
  throttle?: ApiThrottleSettings;
  /** Reserved concurrency of each function with a function URL (the processor webhook); unset, 50. */
  processorWebhookConcurrency?: number;
  /** Where the alarms send their notifications. */
  alarmTopic: ITopic;
}

export class ApiStack extends Stack {
  readonly api: HttpApi;

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props);
    this.api = new HttpApi(this, 'HttpApi', { description: 'Partner payments service API (/api/v1)' });
    this.configureStage(props.throttle ?? DEFAULT_THROTTLE);
    // API Gateway fetches the signing keys from the issuer's OpenID discovery document (its jwks_uri, which must be
    // adminAuth.jwksUrl, the keys the functions verify with); the functions check the same issuer and audience.
    const adminAuthorizer =
      props.adminAuth === undefined
        ? undefined
        : new HttpJwtAuthorizer('AdminJwt', props.adminAuth.issuer, {
            jwtAudience: [props.adminAuth.audience],
            identitySource: ['$request.header.Authorization'],
          });

    const functions = new Map<string, Function>();
    const urlFunctions: Array<{ name: string; fn: Function }> = [];
    for (const route of routes) {
      let fn = functions.get(route.name);
      if (fn === undefined) {
        // A public function URL has no API throttle in front of it: its function's concurrency is capped instead.
        const reservedConcurrency = route.functionUrl === true ? (props.processorWebhookConcurrency ?? DEFAULT_PROCESSOR_WEBHOOK_CONCURRENCY) : undefined;
        fn = this.createFunction(route.name, route.access, props, reservedConcurrency);
        functions.set(route.name, fn);
        if (route.functionUrl === true) {
          // The processor's webhook endpoint: it authenticates by the event signature, so the URL has no IAM auth.
          const url = fn.addFunctionUrl({ authType: FunctionUrlAuthType.NONE });
          new CfnOutput(this, `FunctionUrl-${route.name}`, { value: url.url });
          urlFunctions.push({ name: route.name, fn });
        }
      }
      const authorizer = isAdminRoute(route) ? adminAuthorizer : undefined;
      const httpRoute = new HttpRoute(this, `Route-${route.method}-${route.name}`, {
        httpApi: this.api,
        routeKey: HttpRouteKey.with(route.path, HttpMethod[route.method]),
        integration: new HttpLambdaIntegration(`Integration-${route.method}-${route.name}`, fn),
        ...(authorizer === undefined ? {} : { authorizer }),
      });
      if (authorizer === undefined) Validations.of(httpRoute).acknowledge({ id: 'AwsSolutions-APIG4', reason: selfAuthenticated(route) });
    }
    const fallback = this.createFunction(fallbackRoute.name, fallbackRoute.access, props);
    const fallbackHttpRoute = new HttpRoute(this, 'Route-default', {
      httpApi: this.api,
      routeKey: HttpRouteKey.DEFAULT,
      integration: new HttpLambdaIntegration('Integration-default', fallback),
    });
    Validations.of(fallbackHttpRoute).acknowledge({ id: 'AwsSolutions-APIG4', reason: selfAuthenticated({ ...fallbackRoute, path: '$default' }) });

    this.addAlarms(props.alarmTopic, urlFunctions);
    new CfnOutput(this, 'ApiUrl', { value: `${this.api.apiEndpoint}/api/v1` });
  }

  /** The `$default` stage (HttpApi's own, kept so as not to replace it): throttled, with a JSON access log. */
  private configureStage(throttle: ApiThrottleSettings): void {
    const accessLogs = new LogGroup(this, 'AccessLogs', { retention: RetentionDays.ONE_MONTH });
    const stage = this.api.defaultStage?.node.defaultChild as CfnStage;
    stage.defaultRouteSettings = { throttlingRateLimit: throttle.rateLimit, throttlingBurstLimit: throttle.burstLimit };
    stage.accessLogSettings = {
      destinationArn: accessLogs.logGroupArn,
      format: JSON.stringify({
        requestId: '$context.requestId',
        ip: '$context.identity.sourceIp',
        requestTime: '$context.requestTime',
        routeKey: '$context.routeKey',
        status: '$context.status',
        responseLength: '$context.responseLength',
        integrationError: '$context.integrationErrorMessage',
        authorizerError: '$context.authorizer.error',
      }),
    };
  }

  private addAlarms(topic: ITopic, urlFunctions: ReadonlyArray<{ name: string; fn: Function }>): void {
    const serverErrors = this.rateAlarm('ServerErrorRateAlarm', {
      description: `At least ${SERVER_ERROR_RATE_PERCENT}% of API requests answered 5xx in 5 minutes (see the functions' logs by request id)`,
      errors: this.api.metricServerError({ period: ALARM_PERIOD }),
      requests: this.api.metricCount({ period: ALARM_PERIOD }),
      label: 'API 5xx rate (%)',
      percent: SERVER_ERROR_RATE_PERCENT,
    });
    const counted = (id: string, metricName: string, description: string) =>
      new Alarm(this, id, {
        alarmDescription: description,
        metric: new Metric({ namespace: METRICS_NAMESPACE, metricName, dimensionsMap: { service: SERVICE_NAME }, statistic: 'Sum', period: ALARM_PERIOD }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    // EMF metrics of the service's own namespace and `service` dimension (lib/observability.ts).
    const payoutFailures = counted(
      'PayoutFailuresAlarm',
      'SettlementPayoutsFailed',
      'A settlement payout failed (see the settlements-pay logs and the batch’s failure reason)',
    );
    const idempotencyRecordFailures = counted(
      'IdempotencyRecordFailuresAlarm',
      'IdempotencyRecordFailures',
      'An idempotency record could not be stored or released after its request ran (the table failed then): its key stays in progress until its lease ends; see the logs for "Idempotency"',
    );
    // A function URL's requests never pass the API, so its errors are in Lambda's own URL metrics (AWS/Lambda
    // Url5xxCount, Url4xxCount and UrlRequestCount, by FunctionName). The 5xx count what the function answered 5xx
    // and what it never answered (a crash, a timeout); the chain's EMF ServerErrors counts only the former, of every
    // function together.
    const urlAlarms = urlFunctions.flatMap(({ name, fn }) => {
      const requests = fn.metric('UrlRequestCount', { period: ALARM_PERIOD, statistic: 'Sum' });
      return [
        this.rateAlarm(`FunctionUrlServerErrorRateAlarm-${name}`, {
          description: `At least ${SERVER_ERROR_RATE_PERCENT}% of ${name} function URL requests answered 5xx in 5 minutes (see the ${name} logs; the processor retries its events)`,
          errors: fn.metric('Url5xxCount', { period: ALARM_PERIOD, statistic: 'Sum' }),
          requests,
          label: `${name} function URL 5xx rate (%)`,
          percent: SERVER_ERROR_RATE_PERCENT,
        }),
        // Every event refused (a webhook secret mistyped at a rotation, a processor sending to the wrong URL) is a
        // 4xx: the processor retries for days and then disables the endpoint, and no transaction moves meanwhile.
        this.rateAlarm(`FunctionUrlClientErrorRateAlarm-${name}`, {
          description: `At least ${CLIENT_ERROR_RATE_PERCENT}% of ${name} function URL requests answered 4xx for 15 minutes (a wrong webhook secret? see the ${name} logs for PROCESSOR_SIGNATURE_INVALID)`,
          errors: fn.metric('Url4xxCount', { period: ALARM_PERIOD, statistic: 'Sum' }),
          requests,
          label: `${name} function URL 4xx rate (%)`,
          percent: CLIENT_ERROR_RATE_PERCENT,
          evaluationPeriods: 3,
        }),
        // Past its reserved concurrency the URL answers 429 (the processor retries): a flood, or a cap set too low.
        new Alarm(this, `ThrottlesAlarm-${name}`, {
          alarmDescription: `${name} was throttled at its reserved concurrency (processorWebhookConcurrency): a flood, or a cap too low for the processor's traffic`,
          metric: fn.metricThrottles({ period: ALARM_PERIOD, statistic: 'Sum' }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      ];
    });
    for (const alarm of [serverErrors, ...urlAlarms, payoutFailures, idempotencyRecordFailures]) alarm.addAlarmAction(new SnsAction(topic));
  }

  /**
   * An alarm on `errors` as a percentage of `requests`, per 5-minute period, over `evaluationPeriods` periods in a
   * row (default 1). A period with fewer than {@link RATE_ALARM_MIN_REQUESTS} requests counts as 0 %: one failure
   * among a handful of requests is not a rate (and whatever failed is retried by its caller).
   */
  private rateAlarm(
    id: string,
    options: { description: string; errors: IMetric; requests: IMetric; label: string; percent: number; evaluationPeriods?: number },
  ): Alarm {
    return new Alarm(this, id, {
      alarmDescription: options.description,
      metric: new MathExpression({
        expression: `IF(requests >= ${RATE_ALARM_MIN_REQUESTS}, 100 * errors / requests, 0)`,
        usingMetrics: { errors: options.errors, requests: options.requests },
        period: ALARM_PERIOD,
        label: options.label,
      }),
      threshold: options.percent,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: options.evaluationPeriods ?? 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }

  private createFunction(name: string, access: RouteAccess, props: ApiStackProps, reservedConcurrentExecutions?: number): Function {
    const { table, secretsKey, processorSecret, cursorSecret, railsSecret, rails, settlementQueue, settlementCutoff, adminAuth } = props;
    const fn = serviceFunction(this, name, {
      timeoutSeconds: FUNCTION_TIMEOUT_SECONDS,
      ...(reservedConcurrentExecutions === undefined ? {} : { reservedConcurrentExecutions }),
      environment: {
        TABLE_NAME: table.tableName,
        KMS_KEY_ID: secretsKey.keyArn,
        ...(adminAuth === undefined
          ? {}
          : { ADMIN_JWKS_URL: adminAuth.jwksUrl, ADMIN_JWT_ISSUER: adminAuth.issuer, ADMIN_JWT_AUDIENCE: adminAuth.audience }),
        ...(access.processorKeys === true ? { PROCESSOR_SECRET_ARN: processorSecret.secretArn } : {}),
        ...(access.cursorKey === true ? { CURSOR_SECRET_ARN: cursorSecret.secretArn } : {}),
        ...(access.railKeys === true ? railEnvironment(railsSecret, rails) : {}),
        ...(access.settlementQueue === true ? { SETTLEMENT_QUEUE_URL: settlementQueue.queueUrl } : {}),
        ...(name === SETTLEMENT_RUN_FUNCTION ? { SETTLEMENT_CUTOFF: settlementCutoff } : {}),
      },
    });
    if (access.table !== undefined) grantTableAccess(table, fn, access.table);
    if (access.kms?.includes('encrypt')) secretsKey.grant(fn, 'kms:GenerateDataKey');
    if (access.kms?.includes('decrypt')) secretsKey.grantDecrypt(fn);
    if (access.processorKeys === true) processorSecret.grantRead(fn);
    if (access.cursorKey === true) cursorSecret.grantRead(fn);
    if (access.railKeys === true) railsSecret.grantRead(fn);
    if (access.settlementQueue === true) settlementQueue.grantSendMessages(fn);
    acknowledgeFunctionFindings(fn, access.table === undefined ? undefined : table);
    return fn;
  }
}
