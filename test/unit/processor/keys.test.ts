import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { keysFromSecretsManager } from '../../../lib/processor/keys';

const ARN = 'arn:aws:secretsmanager:eu-west-1:1:secret:processor';

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

const LIVE_KEYS = JSON.stringify({ secret_key: 'sk_live_x', publishable_key: 'pk_live_x', webhook_secret: 'whsec_x' });
const PLACEHOLDER = JSON.stringify({ secret_key: '', publishable_key: '', webhook_secret: '' });

afterEach(() => {
  jest.useRealTimers();
});

describe('processor keys from Secrets Manager', () => {
  it('maps the JSON fields and reads the secret once while the cached value is fresh', async () => {
    const { client, calls } = fakeSecretsManager([LIVE_KEYS]);
    const load = keysFromSecretsManager(client, ARN);

    const first = await load();
    const second = await load();

    expect(first).toEqual({ secretKey: 'sk_live_x', publishableKey: 'pk_live_x', webhookSecret: 'whsec_x' });
    expect(second).toEqual(first);
    expect(calls()).toEqual([{ SecretId: ARN }]);
  });

  it('picks up keys put after the first deploy once the cached placeholder is 5 minutes old', async () => {
    // Arrange: the secret holds the empty placeholder, then the operator puts the real keys
    jest.useFakeTimers({ now: Date.parse('2026-01-01T00:00:00Z'), doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    const { client, calls } = fakeSecretsManager([PLACEHOLDER, LIVE_KEYS]);
    const load = keysFromSecretsManager(client, ARN);

    // Act
    const atColdStart = await load();
    jest.setSystemTime(Date.parse('2026-01-01T00:04:00Z'));
    const warmSoonAfter = await load();
    jest.setSystemTime(Date.parse('2026-01-01T00:05:01Z'));
    const warmLater = await load();

    // Assert
    expect(atColdStart.secretKey).toBeUndefined();
    expect(warmSoonAfter.secretKey).toBeUndefined();
    expect(warmLater).toEqual({ secretKey: 'sk_live_x', publishableKey: 'pk_live_x', webhookSecret: 'whsec_x' });
    expect(calls()).toHaveLength(2);
  });

  it('treats empty values (the placeholder after the first deploy) and non-JSON secrets as not configured', async () => {
    const empty = keysFromSecretsManager(fakeSecretsManager([JSON.stringify({ secret_key: '', publishable_key: ' ' })]).client, ARN);
    const garbage = keysFromSecretsManager(fakeSecretsManager(['not json']).client, ARN);

    expect(await empty()).toEqual({ secretKey: undefined, publishableKey: undefined, webhookSecret: undefined });
    expect(await garbage()).toEqual({ secretKey: undefined, publishableKey: undefined, webhookSecret: undefined });
  });

  it('does not cache a failed read: the next request tries again', async () => {
    const { client, calls } = fakeSecretsManager([new Error('throttled'), LIVE_KEYS]);
    const load = keysFromSecretsManager(client, ARN);

    await expect(load()).rejects.toThrow('throttled');
    await expect(load()).resolves.toMatchObject({ secretKey: 'sk_live_x' });
    expect(calls()).toHaveLength(2);
  });
});
