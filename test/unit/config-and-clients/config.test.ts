import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../../../lib/config';

describe('loadConfig', () => {
  it('fills in local defaults so that a fresh machine needs no settings', () => {
    const config = loadConfig({});

    expect(config).toMatchObject({
      SVC_RUNTIME: 'local',
      PORT: 3000,
      DYNAMODB_LOCAL_PORT: 8000,
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
      PROCESSOR_SANDBOX_PORT: 12111,
      PROCESSOR_API_BASE: 'http://127.0.0.1:12111',
      RAILS_SANDBOX_PORT: 12112,
      WEBHOOK_RETRY_BASE_MS: 1000,
      SETTLEMENT_CUTOFF: 'day_boundary',
      ALLOW_INSECURE_WEBHOOK_URLS: true,
      PROCESSOR_FEE_PERCENT: 2.9,
    });
    expect(config.SETTLEMENT_SCHEDULE).toBeUndefined();
  });

  it('derives local endpoints from the ports that were set', () => {
    const config = loadConfig({ DYNAMODB_LOCAL_PORT: '8123', PROCESSOR_SANDBOX_PORT: '9999' });

    expect(config.DYNAMODB_ENDPOINT).toBe('http://127.0.0.1:8123');
    expect(config.PROCESSOR_API_BASE).toBe('http://127.0.0.1:9999');
  });

  it('names every bad variable in one clear start-up error', () => {
    const attempt = () => loadConfig({ PORT: 'abc', SETTLEMENT_CUTOFF: 'tomorrow', ALLOW_INSECURE_WEBHOOK_URLS: 'maybe' });

    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/PORT: expected a port number/);
    expect(attempt).toThrow(/SETTLEMENT_CUTOFF: expected day_boundary or now/);
    expect(attempt).toThrow(/ALLOW_INSECURE_WEBHOOK_URLS: expected true or false/);
  });

  it('never echoes the value of a bad secret', () => {
    const attempt = () => loadConfig({ ADMIN_JWT_SECRET: 'short-secret-value' });

    expect(attempt).toThrow(/ADMIN_JWT_SECRET: expected at least 32 characters/);
    expect(attempt).not.toThrow(/short-secret-value/);
  });

  it('treats an empty processor key as not configured (the spec answers *_MISSING)', () => {
    const config = loadConfig({ PROCESSOR_SECRET_KEY: '', PROCESSOR_PUBLISHABLE_KEY: ' ' });

    expect(config.PROCESSOR_SECRET_KEY).toBeUndefined();
    expect(config.PROCESSOR_PUBLISHABLE_KEY).toBeUndefined();
  });

  it('has no local defaults in AWS: a missing table name fails the cold start', () => {
    expect(() => loadConfig({ SVC_RUNTIME: 'aws', AWS_REGION: 'eu-west-1' })).toThrow(/TABLE_NAME/);
    expect(() =>
      loadConfig({ SVC_RUNTIME: 'aws', AWS_REGION: 'eu-west-1', TABLE_NAME: 'tbl', KMS_KEY_ID: 'k', DYNAMODB_ENDPOINT: 'http://x' }),
    ).toThrow(/DYNAMODB_ENDPOINT/);
    expect(() => loadConfig({ SVC_RUNTIME: 'aws', AWS_REGION: 'eu-west-1', TABLE_NAME: 'tbl' })).toThrow(/KMS_KEY_ID/);

    const config = loadConfig({ SVC_RUNTIME: 'aws', AWS_REGION: 'eu-west-1', TABLE_NAME: 'tbl', KMS_KEY_ID: 'alias/svc' });
    expect(config.DYNAMODB_ENDPOINT).toBeUndefined();
    expect(config.PROCESSOR_SECRET_KEY).toBeUndefined();
    expect(config.ALLOW_INSECURE_WEBHOOK_URLS).toBe(false);
  });
  it('points the payout rails at the sandbox rails locally, each with its own sandbox key', () => {
    const config = loadConfig({ RAILS_SANDBOX_PORT: '13000' });

    expect(config).toMatchObject({
      RAIL_A_API_BASE: 'http://127.0.0.1:13000/rail-a',
      RAIL_B_API_BASE: 'http://127.0.0.1:13000/rail-b',
      RAIL_A_API_KEY: 'rail_a_sandbox_local',
      RAIL_B_API_KEY: 'rail_b_sandbox_local',
    });
    expect(config.RAILS_SECRET_ARN).toBeUndefined();
  });

  it('treats an empty rail key as not configured, and refuses a rail base that is not an http(s) URL', () => {
    const config = loadConfig({ RAIL_A_API_KEY: '', RAIL_B_API_KEY: ' ' });
    const attempt = () => loadConfig({ RAIL_A_API_BASE: 'ftp://rails.example', RAIL_B_API_BASE: 'not a url' });

    expect(config.RAIL_A_API_KEY).toBeUndefined();
    expect(config.RAIL_B_API_KEY).toBeUndefined();
    expect(attempt).toThrow(/RAIL_A_API_BASE: expected an http\(s\) URL/);
    expect(attempt).toThrow(/RAIL_B_API_BASE: expected an http\(s\) URL/);
  });

  it('has no rail defaults in AWS (only the pay function needs them), and refuses a rail over plain http there', () => {
    const aws = { SVC_RUNTIME: 'aws', AWS_REGION: 'eu-west-1', TABLE_NAME: 'tbl', KMS_KEY_ID: 'alias/svc' };

    const config = loadConfig(aws);
    const withSecret = loadConfig({ ...aws, RAILS_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:rails', RAIL_A_API_BASE: 'https://rail-a.example/v1' });
    const insecure = () => loadConfig({ ...aws, RAIL_B_API_BASE: 'http://rail-b.example' });

    expect(config.RAIL_A_API_BASE).toBeUndefined();
    expect(config.RAIL_B_API_BASE).toBeUndefined();
    expect(config.RAIL_A_API_KEY).toBeUndefined();
    expect(config.RAIL_B_API_KEY).toBeUndefined();
    expect(withSecret).toMatchObject({ RAILS_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:rails', RAIL_A_API_BASE: 'https://rail-a.example/v1' });
    expect(insecure).toThrow(/RAIL_B_API_BASE: must be https when SVC_RUNTIME=aws/);
  });
});
