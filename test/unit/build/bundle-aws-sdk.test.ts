/**
 * The bundles leave `@aws-sdk/*` to the Lambda runtime (`infra/build/bundling.ts`), and the tests resolve those imports
 * from node_modules instead, so a package the runtime does not ship would pass every test and fail only in AWS,
 * at the cold start. Static and cheap: the code of `lib/` and `functions/` is read for the packages it imports
 * at run time (type-only imports are erased), each one held to what the runtime provides.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { transformSync } from 'esbuild';
import { PROJECT_ROOT, RUNTIME_SDK_PACKAGE } from '../../../infra/build/bundling';

/** The `.ts` files under `dir`, by their paths from the project root. */
const sourceFiles = (dir: string): string[] =>
  readdirSync(join(PROJECT_ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(dir, name));

/** The `@aws-sdk/*` packages a module (TypeScript) imports or re-exports at run time, statically or not. */
function sdkImports(source: string): string[] {
  const { code } = transformSync(source, { loader: 'ts', format: 'esm' });
  const specifiers = [...code.matchAll(/\bfrom\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)|\bimport\s*["']([^"']+)["']/g)].map(
    (match) => match[1] ?? match[2] ?? match[3]!,
  );
  return specifiers.filter((specifier) => specifier.startsWith('@aws-sdk/')).map((specifier) => specifier.split('/').slice(0, 2).join('/'));
}

const manifest = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
const installed = (name: string) =>
  JSON.parse(readFileSync(join(PROJECT_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string; repository?: { url?: string } };

describe('the AWS SDK packages the functions import (external: the Lambda runtime provides them)', () => {
  it('are read from the code: run-time imports only, types erased', () => {
    const source = `
      import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
      import type { Message } from '@aws-sdk/client-sqs';
      export { unmarshall } from '@aws-sdk/util-dynamodb/dist-es/index.js';
      const { KMSClient } = await import('@aws-sdk/client-kms');
      new DynamoDBClient({});
    `;

    expect(sdkImports(source)).toEqual(['@aws-sdk/client-dynamodb', '@aws-sdk/util-dynamodb', '@aws-sdk/client-kms']);
  });

  it("are all packages of the AWS SDK v3 that the Lambda runtime ships, and the service's own dependencies", () => {
    const imports = new Map<string, string[]>();
    for (const file of [...sourceFiles('lib'), ...sourceFiles('functions')]) {
      for (const name of sdkImports(readFileSync(join(PROJECT_ROOT, file), 'utf8'))) imports.set(name, [...(imports.get(name) ?? []), file]);
    }

    const refused = [...imports].flatMap(([name, files]) => {
      const where = `${name} (imported by ${[...new Set(files)].join(', ')})`;
      if (!RUNTIME_SDK_PACKAGE.test(name)) return [`${where}: not a package the Lambda runtime provides (RUNTIME_SDK_PACKAGE in infra/build/bundling.ts)`];
      if (!(name in manifest.dependencies)) return [`${where}: not in package.json's dependencies`];
      const { version, repository } = installed(name);
      if (!version.startsWith('3.') || !repository?.url?.includes('aws/aws-sdk-js-v3')) return [`${where}: ${version} is no release of the AWS SDK v3`];
      return [];
    });

    // The scan sees the store's clients: a scan that found nothing would pass whatever the code imported.
    expect([...imports.keys()]).toEqual(expect.arrayContaining(['@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb']));
    expect(refused).toEqual([]);
  });
});
