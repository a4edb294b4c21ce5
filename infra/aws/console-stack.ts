/**
 * The admin console in AWS, on one CloudFront distribution that is also a front door to the HTTP API,
 * so the console calls the admin API from its own origin, as under `npm start`:
 *
 * | Path | Served by |
 * |---|---|
 * | `/admin/*` | the private site bucket (Origin Access Control), holding `console/dist` under `admin/` and the runtime configuration `admin/config.json`; a CloudFront Function answers any path without a file extension with `/admin/index.html` (the app routes those itself); the console's headers (`infra/shared/console-site.ts`) with HSTS |
 * | `/api/*` | the HTTP API, uncached, every method, every viewer header but `Host` (so `Authorization`, `x-api-key`, `x-svc-hmac` reach it) |
 * | anything else | the HTTP API too (its `$default` route answers 404, as locally); `/` and `/admin` redirect to `/admin/` |
 *
 * No distribution-wide error response: a 404 of the API stays the API's. Both buckets are private, encrypted and
 * refuse plain HTTP; the site bucket is versioned and logs its access, and the distribution its requests, to the
 * log bucket. The default CloudFront certificate (`https://d….cloudfront.net`); no custom domain.
 */
import { Annotations, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  AccessLevel,
  AllowedMethods,
  type BehaviorOptions,
  CachePolicy,
  Distribution,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  OriginSslPolicy,
  ResponseHeadersPolicy,
  ViewerProtocolPolicy,
  Function as ViewerFunction,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin, S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import type { Construct } from 'constructs';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type ConsoleOidcSettings, type ConsoleRuntimeConfig, consoleContentSecurityPolicy, consoleRuntimeConfig } from '../shared/console-site';
import type { Stage } from './deploy-settings';
import { acknowledgeConsoleFindings } from './nag-findings';

/** The console's files sit under this key prefix, so an object's key is its path (`/admin/x` is `admin/x`). */
const SITE_PREFIX = 'admin/';

/**
 * The `/admin/*` behavior's viewer-request function: a path whose last segment has no extension is one of the
 * app's own routes (`/admin/partners`, `/admin/callback`) and gets the app's page; a path with one names a file
 * (a missing one is S3's refusal, 403, never the page). The same rule as `infra/local/runtime/console-assets.ts`.
 */
export const SPA_FALLBACK_FUNCTION = `function handler(event) {
  var request = event.request;
  var last = request.uri.substring(request.uri.lastIndexOf('/') + 1);
  if (last.indexOf('.') === -1) request.uri = '/admin/index.html';
  return request;
}`;

/** The default behavior's viewer-request function: the site's root and `/admin` lead to the console. */
export const ROOT_REDIRECT_FUNCTION = `function handler(event) {
  var uri = event.request.uri;
  if (uri === '/' || uri === '/admin') {
    return { statusCode: 302, statusDescription: 'Found', headers: { location: { value: '/admin/' } } };
  }
  return event.request;
}`;

/** Vite's hashed files (`assets/`) never change under their name; every other file may change at any deploy. */
const IMMUTABLE = CacheControl.fromString('public, max-age=31536000, immutable');

export interface ConsoleStackProps extends StackProps {
  stage: Stage;
  /** The HTTP API the distribution forwards `/api/*` (and every path it does not serve itself) to. */
  api: IHttpApi;
  /** The built console: `console/dist` (`infra/shared/console-build.ts`'s `ensureConsoleBuilt` builds it). */
  consoleDist: string;
  /** The OpenID provider the console signs in with; unset, token sign-in only. */
  oidc?: ConsoleOidcSettings | undefined;
}

export class ConsoleStack extends Stack {
  readonly distribution: Distribution;
  readonly siteBucket: Bucket;
  /** What `/admin/config.json` says. */
  readonly runtimeConfig: ConsoleRuntimeConfig;
  /** The Content-Security-Policy the console's answers carry. */
  readonly contentSecurityPolicy: string;

  constructor(scope: Construct, id: string, props: ConsoleStackProps) {
    super(scope, id, props);
    if (!existsSync(join(props.consoleDist, 'index.html'))) {
      throw new Error(`The admin console is not built (${join(props.consoleDist, 'index.html')} is missing): run \`npm run console:build\`, then synthesise again.`);
    }
    this.runtimeConfig = consoleRuntimeConfig(props.oidc);
    // The console calls the provider's discovery document and token endpoint from the page.
    this.contentSecurityPolicy = consoleContentSecurityPolicy({ connectSources: props.oidc === undefined ? [] : [new URL(props.oidc.issuer).origin] });

    // As the other stacks: `prod` keeps its buckets when the stack is deleted, `dev` empties and deletes them (CDK's
    // auto-delete function, which the bucket policy then also allows to list and delete).
    const removal = props.stage === 'prod' ? { removalPolicy: RemovalPolicy.RETAIN } : { removalPolicy: RemovalPolicy.DESTROY, autoDeleteObjects: true };
    const logBucket = new Bucket(this, 'AccessLogs', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      // CloudFront's standard logs are written with an ACL: the bucket must accept the writer's objects.
      objectOwnership: ObjectOwnership.OBJECT_WRITER,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      ...removal,
    });
    this.siteBucket = new Bucket(this, 'Site', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: logBucket,
      serverAccessLogsPrefix: 'site-bucket/',
      lifecycleRules: [{ noncurrentVersionExpiration: Duration.days(30) }],
      ...removal,
    });

    const apiOrigin = new HttpOrigin(`${props.api.apiId}.execute-api.${this.region}.${this.urlSuffix}`, {
      protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
      originSslProtocols: [OriginSslPolicy.TLS_V1_2],
    });
    // Caching disabled, so CloudFront may forward `Authorization` with the other viewer headers; `Host` must be
    // the API's own for API Gateway to find it.
    const toApi: BehaviorOptions = {
      origin: apiOrigin,
      allowedMethods: AllowedMethods.ALLOW_ALL,
      cachePolicy: CachePolicy.CACHING_DISABLED,
      originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
    };
    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'Partner payments: admin console (/admin) and API (/api)',
      httpVersion: HttpVersion.HTTP2_AND_3,
      defaultBehavior: { ...toApi, functionAssociations: [this.viewerFunction('RootRedirect', ROOT_REDIRECT_FUNCTION)] },
      additionalBehaviors: {
        '/admin/*': {
          // Read only (s3:GetObject): without ListBucket, S3 answers a missing file 403, never saying which keys exist.
          origin: S3BucketOrigin.withOriginAccessControl(this.siteBucket, { originAccessLevels: [AccessLevel.READ] }),
          allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
          cachePolicy: CachePolicy.CACHING_OPTIMIZED,
          viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
          responseHeadersPolicy: this.consoleHeadersPolicy(),
          functionAssociations: [this.viewerFunction('SpaFallback', SPA_FALLBACK_FUNCTION)],
        },
        '/api/*': toApi,
      },
      enableLogging: true,
      logBucket,
      logFilePrefix: 'cloudfront/',
    });

    this.deploySite(props.consoleDist);
    acknowledgeConsoleFindings(this, { distribution: this.distribution, siteBucket: this.siteBucket });
    if (props.oidc === undefined) {
      Annotations.of(this).addWarningV2(
        'partner-payments:console-sign-in',
        'The admin console signs in with a pasted token only (context consoleOidcIssuer, consoleOidcClientId missing): set them to sign in through your OpenID provider (docs/deploy.md).',
      );
    }
    new CfnOutput(this, 'ConsoleUrl', { value: `https://${this.distribution.distributionDomainName}/admin/` });
    new CfnOutput(this, 'OidcRedirectUri', { value: `https://${this.distribution.distributionDomainName}/admin/callback` });
  }

  /** The console's headers, the same as `npm start` sends (`infra/shared/console-site.ts`), plus HSTS. */
  private consoleHeadersPolicy(): ResponseHeadersPolicy {
    return new ResponseHeadersPolicy(this, 'ConsoleHeaders', {
      comment: 'Admin console: CSP, nosniff, DENY framing, no referrer, HSTS (infra/shared/console-site.ts)',
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: this.contentSecurityPolicy, override: true },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: false, override: true },
      },
    });
  }

  private viewerFunction(id: string, code: string) {
    const fn = new ViewerFunction(this, id, { code: FunctionCode.fromInline(code), runtime: FunctionRuntime.JS_2_0 });
    return { function: fn, eventType: FunctionEventType.VIEWER_REQUEST };
  }

  /**
   * `console/dist` into the site bucket under `admin/`, with `config.json`. Two deployments, so each file gets its
   * caching: the hashed files first and never pruned (a page still open from the previous deploy loads its own),
   * then the page and the configuration, revalidated on every load, so a deploy shows at the next reload.
   */
  private deploySite(consoleDist: string): void {
    const assets = new BucketDeployment(this, 'DeployAssets', {
      sources: [Source.asset(join(consoleDist, 'assets'))],
      destinationBucket: this.siteBucket,
      destinationKeyPrefix: `${SITE_PREFIX}assets/`,
      cacheControl: [IMMUTABLE],
      prune: false,
    });
    const pages = new BucketDeployment(this, 'DeployPages', {
      sources: [Source.asset(consoleDist, { exclude: ['assets'] }), Source.jsonData('config.json', this.runtimeConfig)],
      destinationBucket: this.siteBucket,
      destinationKeyPrefix: SITE_PREFIX,
      // Left to the other deployment, and never pruned by this one.
      exclude: ['assets/*'],
      cacheControl: [CacheControl.noCache()],
    });
    pages.node.addDependency(assets);
  }
}

