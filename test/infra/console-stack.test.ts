/**
 * The console stack (`infra/aws/console-stack.ts`): a private bucket behind CloudFront with Origin Access Control,
 * `/admin/*` from the bucket with the SPA fallback and the console's headers, `/api/*` (and the rest) to the HTTP
 * API uncached with every method and viewer header but Host; the same Content-Security-Policy, headers and
 * runtime configuration as `npm start` serves; cdk-nag clean. Built against a stand-in API stack and console
 * build, so no function is bundled and no Vite build is awaited.
 */
import { describe, expect, it } from '@jest/globals';
import { App, Stack } from 'aws-cdk-lib';
import { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { CachePolicy, OriginRequestPolicy } from 'aws-cdk-lib/aws-cloudfront';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONSOLE_CONTENT_SECURITY_POLICY, consoleContentSecurityPolicy } from '../../infra/shared/console-site';
import { ConsoleStack, ROOT_REDIRECT_FUNCTION, SPA_FALLBACK_FUNCTION } from '../../infra/aws/console-stack';
import { consoleOidcSettings, type Stage } from '../../infra/aws/deploy-settings';
import { consoleAsset } from '../../infra/local/runtime/console-assets';
import { consoleDistFixture } from '../support/console-dist';

const OIDC = { issuer: 'https://login.example/tenant/', clientId: 'partner-payments-console', scopes: 'openid profile' };
const DIST = consoleDistFixture();

interface Built {
  app: App;
  stack: ConsoleStack;
  template: Template;
}

function build(options: { stage?: Stage; oidc?: typeof OIDC } = {}): Built {
  const app = new App();
  const apiStack = new Stack(app, 'Api');
  const api = new HttpApi(apiStack, 'HttpApi');
  const stack = new ConsoleStack(app, 'Console', { stage: options.stage ?? 'dev', api, consoleDist: DIST, oidc: options.oidc });
  return { app, stack, template: Template.fromStack(stack) };
}

const tokenSignIn = build();
const oidcSignIn = build({ oidc: OIDC });
const prod = build({ stage: 'prod' });

/** The one resource of `type` in `template`: its logical id and properties. */
function only(template: Template, type: string): [string, Record<string, any>] {
  const found = Object.entries(template.findResources(type));
  expect(found).toHaveLength(1);
  const [id, resource] = found[0]!;
  return [id, resource.Properties];
}

const distributionConfig = (template: Template) => only(template, 'AWS::CloudFront::Distribution')[1].DistributionConfig;

/** The logical id of the bucket whose logical id starts with `prefix`. */
const bucketId = (template: Template, prefix: string) => Object.keys(template.findResources('AWS::S3::Bucket')).find((id) => id.startsWith(prefix))!;

/** What the local server answers `/admin/config.json` with: its headers and JSON body. */
async function localConfigAnswer(): Promise<{ headers: Record<string, string>; body: unknown }> {
  const answer = await consoleAsset('GET', '/admin/config.json');
  return { headers: answer!.headers, body: JSON.parse(Buffer.from(answer!.body, 'base64').toString('utf8')) };
}

/** The `config.json` the pages' deployment puts in the bucket, read from the synthesised asset. */
function deployedConfig({ app, template }: Built): unknown {
  const pages = Object.entries(template.findResources('Custom::CDKBucketDeployment')).find(([id]) => id.startsWith('DeployPages'))![1];
  const assemblyDir = app.synth().directory;
  const files = (pages.Properties.SourceObjectKeys as string[]).map((key) => join(assemblyDir, `asset.${key.replace(/\.zip$/, '')}`));
  const configDir = files.find((dir) => readdirSync(dir).includes('config.json'))!;
  return JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8'));
}

/** A CloudFront Function's code run as CloudFront runs it, on a viewer request for `uri`. */
const runViewerFunction = (code: string, uri: string) => (new Function(`${code}; return handler;`)() as (event: unknown) => any)({ request: { uri, headers: {} } });

describe('console stack: the site bucket', () => {
  it('is private, encrypted, versioned, refuses plain HTTP, and logs its access', () => {
    const { template } = tokenSignIn;
    const logs = bucketId(template, 'AccessLogs');

    template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      VersioningConfiguration: { Status: 'Enabled' },
      LoggingConfiguration: { DestinationBucketName: { Ref: logs }, LogFilePrefix: 'site-bucket/' },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
    });
    for (const id of [bucketId(template, 'Site'), logs]) {
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: id },
        PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } }, Principal: { AWS: '*' } })]) },
      });
    }
  });

  it('is read through Origin Access Control, never an origin access identity', () => {
    const { template } = tokenSignIn;
    const s3Origin = distributionConfig(template).Origins.find((origin: any) => origin.S3OriginConfig !== undefined);

    template.resourceCountIs('AWS::CloudFront::CloudFrontOriginAccessIdentity', 0);
    template.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
      OriginAccessControlConfig: { OriginAccessControlOriginType: 's3', SigningBehavior: 'always', SigningProtocol: 'sigv4' },
    });
    expect(s3Origin).toMatchObject({
      DomainName: { 'Fn::GetAtt': [bucketId(template, 'Site'), 'RegionalDomainName'] },
      OriginAccessControlId: { 'Fn::GetAtt': [expect.stringMatching(/OriginAccessControl/), 'Id'] },
      S3OriginConfig: { OriginAccessIdentity: '' },
    });
  });

  it('lets only CloudFront, for this distribution, read it (prod: nothing else is allowed; dev: CDK may also empty it on delete)', () => {
    const allowed = ({ template }: Built) => {
      const site = bucketId(template, 'Site');
      const [, policy] = Object.entries(template.findResources('AWS::S3::BucketPolicy')).find(([, resource]) => resource.Properties.Bucket.Ref === site)!;
      return (policy.Properties.PolicyDocument.Statement as Array<Record<string, any>>).filter((statement) => statement.Effect === 'Allow');
    };
    const cloudFrontRead = {
      Effect: 'Allow',
      Principal: { Service: 'cloudfront.amazonaws.com' },
      Action: 's3:GetObject',
      Condition: {
        StringEquals: {
          'AWS:SourceArn': {
            'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':cloudfront::', { Ref: 'AWS::AccountId' }, ':distribution/', { Ref: only(prod.template, 'AWS::CloudFront::Distribution')[0] }]],
          },
        },
      },
    };

    expect(allowed(prod)).toEqual([expect.objectContaining(cloudFrontRead)]);
    const dev = allowed(tokenSignIn);
    expect(dev.filter((statement) => statement.Principal.Service !== undefined)).toEqual([expect.objectContaining({ ...cloudFrontRead, Condition: expect.anything() })]);
    expect(dev.filter((statement) => statement.Principal.Service === undefined).map((statement) => [statement.Principal.AWS['Fn::GetAtt'][0], statement.Action])).toEqual([
      [expect.stringMatching(/^CustomS3AutoDeleteObjects/), ['s3:PutBucketPolicy', 's3:GetBucket*', 's3:List*', 's3:DeleteObject*']],
    ]);
    prod.template.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Retain' });
  });

  it('receives the build under admin/: hashed files cached for good and never pruned, then the page and config.json revalidated', () => {
    const deployments = Object.entries(tokenSignIn.template.findResources('Custom::CDKBucketDeployment'));
    const byId = (prefix: string) => deployments.find(([id]) => id.startsWith(prefix))![1];

    expect(byId('DeployAssets').Properties).toMatchObject({ DestinationBucketKeyPrefix: 'admin/assets/', Prune: false, SystemMetadata: { 'cache-control': 'public, max-age=31536000, immutable' } });
    expect(byId('DeployPages').Properties).toMatchObject({ DestinationBucketKeyPrefix: 'admin/', Prune: true, Exclude: ['assets/*'], SystemMetadata: { 'cache-control': 'no-cache' } });
    expect(byId('DeployPages').DependsOn).toEqual(expect.arrayContaining([expect.stringMatching(/^DeployAssets/)]));
  });
});

describe('console stack: the distribution', () => {
  it('serves /admin/* from the bucket with the SPA fallback function and the console headers, cached, GET and HEAD only', () => {
    const { template } = tokenSignIn;
    const config = distributionConfig(template);
    const s3OriginId = config.Origins.find((origin: any) => origin.S3OriginConfig !== undefined).Id;
    const [fallbackId, fallback] = Object.entries(template.findResources('AWS::CloudFront::Function')).find(([, fn]) => fn.Properties.FunctionCode === SPA_FALLBACK_FUNCTION)!;

    expect(config.CacheBehaviors.find((behavior: any) => behavior.PathPattern === '/admin/*')).toEqual({
      PathPattern: '/admin/*',
      TargetOriginId: s3OriginId,
      AllowedMethods: ['GET', 'HEAD'],
      CachePolicyId: CachePolicy.CACHING_OPTIMIZED.cachePolicyId,
      Compress: true,
      FunctionAssociations: [{ EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [fallbackId, 'FunctionARN'] } }],
      ResponseHeadersPolicyId: { Ref: only(template, 'AWS::CloudFront::ResponseHeadersPolicy')[0] },
      ViewerProtocolPolicy: 'redirect-to-https',
    });
    expect(fallback.Properties.FunctionConfig.Runtime).toBe('cloudfront-js-2.0');
  });

  it('sends /api/* and every other path to the HTTP API: uncached, every method, every viewer header but Host, https only', () => {
    const config = distributionConfig(tokenSignIn.template);
    const apiOrigin = config.Origins.find((origin: any) => origin.CustomOriginConfig !== undefined);
    const toApi = {
      TargetOriginId: apiOrigin.Id,
      AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
      CachePolicyId: CachePolicy.CACHING_DISABLED.cachePolicyId,
      OriginRequestPolicyId: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER.originRequestPolicyId,
      ViewerProtocolPolicy: 'https-only',
    };

    expect(apiOrigin).toMatchObject({
      DomainName: { 'Fn::Join': ['', [{ 'Fn::ImportValue': expect.stringMatching(/HttpApi/) }, '.execute-api.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }]] },
      CustomOriginConfig: { OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] },
    });
    expect(config.CacheBehaviors.find((behavior: any) => behavior.PathPattern === '/api/*')).toEqual({ PathPattern: '/api/*', Compress: true, ...toApi });
    expect(config.DefaultCacheBehavior).toMatchObject(toApi);
    // No distribution-wide error page: the API's own 404s and 403s reach the caller as the API wrote them.
    expect(config.CustomErrorResponses).toBeUndefined();
    expect(config.Logging).toMatchObject({ Bucket: { 'Fn::GetAtt': [bucketId(tokenSignIn.template, 'AccessLogs'), 'RegionalDomainName'] }, Prefix: 'cloudfront/' });
  });

  it('answers the app’s own paths with its page, and lets file paths through (SPA fallback function)', () => {
    const uris = ['/admin/', '/admin/partners', '/admin/callback', '/admin/api-keys', '/admin/assets/index-abc.js', '/admin/config.json', '/admin/assets/missing.css'];

    expect(uris.map((uri) => runViewerFunction(SPA_FALLBACK_FUNCTION, uri).uri)).toEqual([
      '/admin/index.html',
      '/admin/index.html',
      '/admin/index.html',
      '/admin/index.html',
      '/admin/assets/index-abc.js',
      '/admin/config.json',
      '/admin/assets/missing.css',
    ]);
  });

  it('redirects / and /admin to /admin/, and passes any other path to the API (root function on the default behavior)', () => {
    const config = distributionConfig(tokenSignIn.template);
    const [rootId] = Object.entries(tokenSignIn.template.findResources('AWS::CloudFront::Function')).find(([, fn]) => fn.Properties.FunctionCode === ROOT_REDIRECT_FUNCTION)!;

    expect(config.DefaultCacheBehavior.FunctionAssociations).toEqual([{ EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [rootId, 'FunctionARN'] } }]);
    expect(['/', '/admin'].map((uri) => runViewerFunction(ROOT_REDIRECT_FUNCTION, uri))).toEqual(
      ['/', '/admin'].map(() => ({ statusCode: 302, statusDescription: 'Found', headers: { location: { value: '/admin/' } } })),
    );
    expect(runViewerFunction(ROOT_REDIRECT_FUNCTION, '/api/v1/health')).toEqual({ uri: '/api/v1/health', headers: {} });
  });
});

describe('console stack: the same headers and configuration as npm start', () => {
  const headersPolicy = (template: Template) => only(template, 'AWS::CloudFront::ResponseHeadersPolicy')[1].ResponseHeadersPolicyConfig.SecurityHeadersConfig;

  it('sends the local Content-Security-Policy, nosniff, DENY framing and no referrer, plus HSTS, overriding the origin', async () => {
    const local = (await localConfigAnswer()).headers;
    const policy = headersPolicy(tokenSignIn.template);

    expect({
      csp: policy.ContentSecurityPolicy.ContentSecurityPolicy,
      nosniff: policy.ContentTypeOptions === undefined ? undefined : 'nosniff',
      frame: policy.FrameOptions.FrameOption,
      referrer: policy.ReferrerPolicy.ReferrerPolicy,
    }).toEqual({ csp: local['content-security-policy'], nosniff: local['x-content-type-options'], frame: local['x-frame-options'], referrer: local['referrer-policy'] });
    expect(policy.ContentSecurityPolicy.ContentSecurityPolicy).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
    expect(policy.StrictTransportSecurity).toEqual({ AccessControlMaxAgeSec: 31_536_000, IncludeSubdomains: false, Override: true });
    expect([policy.ContentSecurityPolicy, policy.ContentTypeOptions, policy.FrameOptions, policy.ReferrerPolicy].every((header) => header.Override === true)).toBe(true);
  });

  it('with an OpenID provider, also lets the page call the provider’s origin (connect-src), and nothing else changes', () => {
    const csp = headersPolicy(oidcSignIn.template).ContentSecurityPolicy.ContentSecurityPolicy;

    expect(csp).toBe(consoleContentSecurityPolicy({ connectSources: ['https://login.example'] }));
    expect(csp).toBe(CONSOLE_CONTENT_SECURITY_POLICY.replace("connect-src 'self'", "connect-src 'self' https://login.example"));
  });

  it('writes config.json as npm start answers it without a provider (token sign-in), and with one the OpenID settings', async () => {
    expect(deployedConfig(tokenSignIn)).toEqual({ signIn: 'token' });
    expect((await localConfigAnswer()).body).toEqual({ signIn: 'token' });
    expect(deployedConfig(oidcSignIn)).toEqual({
      signIn: 'oidc',
      issuer: 'https://login.example/tenant/',
      clientId: 'partner-payments-console',
      scopes: 'openid profile',
      redirectPath: '/admin/callback',
    });
  });

  it('warns at synth when the console has no OpenID provider', () => {
    Annotations.fromStack(tokenSignIn.stack).hasWarning('*', Match.stringLikeRegexp('signs in with a pasted token only'));
    expect(Annotations.fromStack(oidcSignIn.stack).findWarning('*', Match.stringLikeRegexp('signs in with a pasted token only'))).toEqual([]);
  });
});

describe('console stack: settings and checks', () => {
  const settings = (context: Record<string, string>) => consoleOidcSettings(new App({ context }));

  it('reads the OpenID context keys, defaulting the scopes to openid', () => {
    expect(settings({})).toBeUndefined();
    expect(settings({ consoleOidcIssuer: 'https://login.example/', consoleOidcClientId: 'console' })).toEqual({ issuer: 'https://login.example/', clientId: 'console', scopes: 'openid' });
    expect(settings({ consoleOidcIssuer: 'https://login.example/', consoleOidcClientId: 'console', consoleOidcScopes: ' openid  email ' })).toMatchObject({ scopes: 'openid email' });
  });

  it('refuses an incomplete or unusable provider, naming the key', () => {
    expect(() => settings({ consoleOidcIssuer: 'https://login.example/' })).toThrow('context consoleOidcClientId: required with consoleOidcIssuer');
    expect(() => settings({ consoleOidcClientId: 'console' })).toThrow('context consoleOidcIssuer: required with consoleOidcClientId');
    expect(() => settings({ consoleOidcIssuer: 'http://login.example/', consoleOidcClientId: 'console' })).toThrow('context consoleOidcIssuer: expected an https URL');
    expect(() => settings({ consoleOidcIssuer: 'https://login.example/', consoleOidcClientId: 'console', consoleOidcScopes: 'profile' })).toThrow('context consoleOidcScopes: must include openid');
    expect(() => settings({ consoleOidcScopes: 'openid' })).toThrow('context consoleOidcScopes: given without consoleOidcIssuer and consoleOidcClientId');
  });

  it('refuses to synthesise without a built console, saying how to build it', () => {
    const app = new App();
    const api = new HttpApi(new Stack(app, 'Api'), 'HttpApi');

    expect(() => new ConsoleStack(app, 'Console', { stage: 'dev', api, consoleDist: join(DIST, 'missing') })).toThrow('run `npm run console:build`');
  });

  it.each([
    ['dev, token sign-in', tokenSignIn],
    ['dev, OpenID sign-in', oidcSignIn],
    ['prod', prod],
  ])('raises no cdk-nag AwsSolutions error or warning that is not acknowledged with its reason (%s)', (_name, { stack }) => {
    const report = new AwsSolutionsChecks(undefined, { verbose: false }).validateScope(stack);

    expect(report.violations.map((violation) => `${violation.severity} ${violation.ruleName}`)).toEqual([]);
  });
});
