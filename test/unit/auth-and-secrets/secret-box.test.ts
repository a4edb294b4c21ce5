import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localKeyEncryptionKey } from '../../../lib/secrets/local-key';
import { createSecretBox, type KeyEncryptionKey } from '../../../lib/secrets/secret-box';

const keyFile = () => join(mkdtempSync(join(tmpdir(), 'secret-box-')), 'nested', 'local-kms.key');

describe('envelope encryption', () => {
  it('seals a secret so that the stored form holds neither it nor its data key, and opens it again', async () => {
    const box = createSecretBox(localKeyEncryptionKey(keyFile()));

    const sealed = await box.seal('svc_hmac_very-secret-value', 'api-key-hmac-secret');

    expect(JSON.stringify(sealed)).not.toContain('very-secret-value');
    expect(sealed).toMatchObject({ v: 1, kek: 'local' });
    expect(await box.open(sealed, 'api-key-hmac-secret')).toBe('svc_hmac_very-secret-value');
  });

  it('uses a fresh data key and IV per secret', async () => {
    const box = createSecretBox(localKeyEncryptionKey(keyFile()));

    const a = await box.seal('same', 'p');
    const b = await box.seal('same', 'p');

    expect(a.edk).not.toBe(b.edk);
    expect(a.iv).not.toBe(b.iv);
    expect(a.ct).not.toBe(b.ct);
  });

  it('refuses a tampered ciphertext or a secret sealed for another purpose', async () => {
    const box = createSecretBox(localKeyEncryptionKey(keyFile()));
    const sealed = await box.seal('secret', 'api-key-hmac-secret');
    const flipped = Buffer.from(sealed.ct, 'base64');
    flipped[0] = (flipped[0] ?? 0) ^ 1;

    await expect(box.open({ ...sealed, ct: flipped.toString('base64') }, 'api-key-hmac-secret')).rejects.toThrow();
    await expect(box.open(sealed, 'webhook-endpoint-secret')).rejects.toThrow();
  });

  it('creates the local key file once, readable only by its owner, and reuses it across processes', async () => {
    const path = keyFile();
    const sealed = await createSecretBox(localKeyEncryptionKey(path)).seal('kept', 'p');
    const keyBefore = readFileSync(path, 'utf8');

    const reopened = await createSecretBox(localKeyEncryptionKey(path)).open(sealed, 'p');

    expect(reopened).toBe('kept');
    expect(readFileSync(path, 'utf8')).toBe(keyBefore);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('asks the key-encryption key once per data key, then serves opens from memory', async () => {
    const inner = localKeyEncryptionKey(keyFile());
    let decrypts = 0;
    const counting: KeyEncryptionKey = {
      ...inner,
      decryptDataKey: (encrypted, purpose) => {
        decrypts++;
        return inner.decryptDataKey(encrypted, purpose);
      },
    };
    const box = createSecretBox(counting);
    const sealed = await box.seal('hot-path', 'p');

    for (let i = 0; i < 5; i++) expect(await box.open(sealed, 'p')).toBe('hot-path');

    expect(decrypts).toBe(1);
  });
});
