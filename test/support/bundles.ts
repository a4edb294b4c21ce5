/**
 * Bundles built as they deploy (`infra/build/bundling.ts`, Stripe trimmed), then imported as Lambda imports them. They
 * are written under `.data/test-bundles/<random>/`, inside the project, so that their `@aws-sdk/*` imports
 * (external: the Lambda runtime provides them) resolve from its node_modules. `remove()` deletes them.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Plugin } from 'esbuild';
import { bundle, buildFunction, esbuildOptions } from '../../infra/build/bundling';

export interface TestBundles {
  /** `functions/<name>.ts` bundled and imported: the module Lambda loads (its `handler`). */
  importFunction<T>(name: string): Promise<T>;
  /** `source` (a module of its own) bundled with the deployed options, or with `plugins` instead of theirs, and imported. */
  importModule<T>(source: string, plugins?: Plugin[]): Promise<T>;
  remove(): void;
}

export function testBundles(): TestBundles {
  const dir = fileURLToPath(new URL(`../../.data/test-bundles/${randomUUID()}/`, import.meta.url));
  const importBundle = (outfile: string) => import(pathToFileURL(outfile).href);
  return {
    importFunction: async (name) => importBundle((await buildFunction(name, join(dir, name))).outfile),
    async importModule(source, plugins) {
      const moduleDir = join(dir, randomUUID());
      mkdirSync(moduleDir, { recursive: true });
      writeFileSync(join(moduleDir, 'entry.ts'), source);
      const options = esbuildOptions(join(moduleDir, 'entry.ts'), join(moduleDir, 'index.mjs'));
      await bundle({ ...options, ...(plugins === undefined ? {} : { plugins }), logLevel: 'silent' });
      return importBundle(join(moduleDir, 'index.mjs'));
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
      try {
        rmdirSync(dirname(dir));
      } catch {
        // Another test file's bundles are still in `.data/test-bundles`: the last one out removes it.
      }
    },
  };
}
