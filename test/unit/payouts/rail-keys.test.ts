import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { railKeysFromEnvironment, railKeysFromSecretsManager } from '../../../lib/payouts/rail-keys';

const ARN = 'arn:aws:secretsmanager:eu-west-1:1:secret:rails';

/** A real SDK client (the Powertools provider accepts only one) whose calls answer `answers` in turn. */
function fakeSecretsManager(answers: Array<string | Error>) {
  const client = new SecretsManagerClient({ region: 'eu-west-1' });
  const send = jest.spyOn(client, 'send').mockImplementation((async () => {
    const answer = answers.shift();
    if (answer instanceof Error) throw answer;
    return { SecretString: answer };
  }) as never);
  return { client, calls: () => send.mock.calls.map(([command]) => (command as { input: unknown }).input) };
}

const LIVE_KEYS = JSON.stringify({ rail_a_api_key: 'ra_live_x', rail_b_api_key: 'rb_live_x' });

afterEach(() => {
  jest.useRealTimers();
});

describe('rail keys', () => {
  it('locally are the environment keys as configured', async () => {
    const load = railKeysFromEnvironment({ railA: 'rail_a_sandbox_local', railB: undefined });

    expect(await load()).toEqual({ railA: 'rail_a_sandbox_local', railB: undefined });
  });

  it('in AWS map the secret JSON fields and read the secret once while the cached value is fresh', async () => {
    const { client, calls } = fakeSecretsManager([LIVE_KEYS]);
    const load = railKeysFromSecretsManager(client, ARN);

    const first = await load();
    const second = await load();

    expect(first).toEqual({ railA: 'ra_live_x', railB: 'rb_live_x' });
    expect(second).toEqual(first);
    expect(calls()).toEqual([{ SecretId: ARN }]);
  });

  it('pick up keys put after the first deploy once the cached value is 5 minutes old', async () => {
    // Arrange: the secret holds an empty placeholder, then the operator puts the real keys
    jest.useFakeTimers({ now: Date.parse('2026-01-01T00:00:00Z'), doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    const { client, calls } = fakeSecretsManager([JSON.stringify({ rail_a_api_key: '', rail_b_api_key: '' }), LIVE_KEYS]);
    const load = railKeysFromSecretsManager(client, ARN);

    // Act
    const atColdStart = await load();
    jest.setSystemTime(Date.parse('2026-01-01T00:04:59Z'));
    const warmSoonAfter = await load();
    jest.setSystemTime(Date.parse('2026-01-01T00:05:01Z'));
    const warmLater = await load();

    // Assert
    expect(atColdStart).toEqual({ railA: undefined, railB: undefined });
    expect(warmSoonAfter).toEqual({ railA: undefined, railB: undefined });
    expect(warmLater).toEqual({ railA: 'ra_live_x', railB: 'rb_live_x' });
    expect(calls()).toHaveLength(2);
  });

  it('treat blank values, other fields and a secret that is not JSON as not configured', async () => {
    const blank = railKeysFromSecretsManager(fakeSecretsManager([JSON.stringify({ rail_a_api_key: ' ', rail_b_api_key: 42 })]).client, ARN);
    const garbage = railKeysFromSecretsManager(fakeSecretsManager(['not json']).client, ARN);

    expect(await blank()).toEqual({ railA: undefined, railB: undefined });
    expect(await garbage()).toEqual({ railA: undefined, railB: undefined });
  });

  it('do not cache a failed read: the next call reads the secret again', async () => {
    const { client, calls } = fakeSecretsManager([new Error('throttled'), LIVE_KEYS]);
    const load = railKeysFromSecretsManager(client, ARN);

    await expect(load()).rejects.toThrow();
    expect(await load()).toEqual({ railA: 'ra_live_x', railB: 'rb_live_x' });
    expect(calls()).toHaveLength(2);
  });
});
