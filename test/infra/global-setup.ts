/**
 * Builds every function's bundle once for the whole infra run (`infra/build/build-all-functions.ts`, a few at once),
 * into a directory named by the hash of everything the bundles are made of (functions/, lib/, the bundling
 * options, the files copied beside them, the lockfile), and points the synths at it (`FUNCTION_BUNDLE_CACHE_DIR`,
 * read by `infra/aws/service-function.ts`): each test file's app, and `npx cdk synth`, then copy bundles instead
 * of running esbuild ~46 times per synth. The same source always makes the same bytes (infra/build/bundling.ts), so a
 * copy is what a build would give.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const PROJECT_ROOT = resolve(__dirname, '..', '..');

/** What a bundle is made of: any change here is a new cache directory. */
const SOURCES = ['functions', 'lib', 'infra/build/bundling.ts', 'infra/build/build-function.ts', 'infra/build/build-all-functions.ts', 'docs/openapi.json', 'package-lock.json', 'tsconfig.json'];

function filesUnder(path: string): string[] {
  const full = join(PROJECT_ROOT, path);
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full).sort().flatMap((name) => filesUnder(join(path, name)));
}

function sourceHash(): string {
  const hash = createHash('sha256');
  for (const file of SOURCES.flatMap(filesUnder)) hash.update(`${file}\0`).update(readFileSync(join(PROJECT_ROOT, file))).update('\0');
  return hash.digest('hex').slice(0, 16);
}

export default async function globalSetup(): Promise<void> {
  const root = join(PROJECT_ROOT, 'node_modules', '.cache', 'function-bundles');
  const dir = join(root, sourceHash());
  if (!existsSync(dir)) {
    // An older source's bundles are of no use any more.
    rmSync(root, { recursive: true, force: true });
    const building = `${dir}.building-${process.pid}`;
    const build = spawnSync(process.execPath, ['--import', 'tsx', 'infra/build/build-all-functions.ts', building], { cwd: PROJECT_ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error(`building the function bundles failed (${build.error?.message ?? `exit ${build.status ?? build.signal}`})`);
    renameSync(building, dir);
  }
  process.env.FUNCTION_BUNDLE_CACHE_DIR = dir;
}
