/**
 * The secret box of this process: KMS when `KMS_KEY_ID` is set (AWS), else the local key file. An adapter: only
 * `lib/composition` wires it (into the chain's HMAC check and the use cases that seal or open secrets).
 */
import { join } from 'node:path';
import { KMSClient } from '@aws-sdk/client-kms';
import { config } from '../config';
import { traced } from '../observability';
import { kmsKeyEncryptionKey } from './kms-key';
import { localKeyEncryptionKey } from './local-key';
import { createSecretBox } from './secret-box';

export const secretBox = createSecretBox(
  config.KMS_KEY_ID === undefined
    ? localKeyEncryptionKey(join(config.LOCAL_DATA_DIR, 'local-kms.key'))
    : kmsKeyEncryptionKey(traced(new KMSClient({ region: config.AWS_REGION })), config.KMS_KEY_ID),
);
