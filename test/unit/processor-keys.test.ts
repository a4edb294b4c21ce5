import { describe, expect, it } from '@jest/globals';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { keysFromSecretsManager } from '../../lib/processor/keys';

function fakeSecretsManager(answers: Array<string | Error>) {
  const calls: unknown[] = [];
  const client = {
    send: async (command: { input: unknown }) => {
      calls.push(command.input);
      const answer = answers.shift();
      if (answer instanceof Error) throw answer;
      return { SecretString: answer };
    },
  } as unknown as Pick<SecretsManagerClient, 'send'>;
  return { client, calls };
}

describe('processor keys from Secrets Manager', () => {
  it('reads the secret once per container and maps its JSON fields', async () => {
    const { client, calls } = fakeSecretsManager([JSON.stringify({ secret_key: 'sk_live_x', publishable_key: 'pk_live_x', webhook_secret: 'whsec_x' })]);
    const load = keysFromSecretsManager(client, 'arn:aws:secretsmanager:eu-west-1:1:secret:processor');

    const first = await load();
    const second = await load();

    expect(first).toEqual({ secretKey: 'sk_live_x', publishableKey: 'pk_live_x', webhookSecret: 'whsec_x' });
    expect(second).toBe(first);
    expect(calls).toEqual([{ SecretId: 'arn:aws:secretsmanager:eu-west-1:1:secret:processor' }]);
  });

  it('treats empty values (the placeholder after the first deploy) and non-JSON secrets as not configured', async () => {
    const empty = keysFromSecretsManager(fakeSecretsManager([JSON.stringify({ secret_key: '', publishable_key: ' ' })]).client, 'arn');
    const garbage = keysFromSecretsManager(fakeSecretsManager(['not json']).client, 'arn');

    expect(await empty()).toEqual({ secretKey: undefined, publishableKey: undefined, webhookSecret: undefined });
    expect(await garbage()).toEqual({ secretKey: undefined, publishableKey: undefined, webhookSecret: undefined });
  });

  it('does not cache a failed read: the next request tries again', async () => {
    const { client, calls } = fakeSecretsManager([new Error('throttled'), JSON.stringify({ secret_key: 'sk_live_y' })]);
    const load = keysFromSecretsManager(client, 'arn');

    await expect(load()).rejects.toThrow('throttled');
    await expect(load()).resolves.toMatchObject({ secretKey: 'sk_live_y' });
    expect(calls).toHaveLength(2);
  });
});
