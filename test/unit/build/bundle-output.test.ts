/**
 * A function's bundle is the same bytes wherever it is built: the CDK stages each asset in a directory that varies
 * and hashes it by its output (`assetHashType: OUTPUT`), so any trace of the output directory in the bundle or
 * its source map would redeploy unchanged code. The map still leads `--enable-source-maps` to the sources.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { bundle, buildFunction, esbuildOptions, PROJECT_ROOT } from '../../../infra/build/bundling';

/** One directory inside the project (as `cdk.out` is) and one deeper outside it (as a temporary staging one). */
const insideProject = join(PROJECT_ROOT, '.data', `bundle-output-${randomUUID()}`);
const outsideProject = mkdtempSync(join(tmpdir(), 'bundle-output-'));
afterAll(() => {
  rmSync(insideProject, { recursive: true, force: true });
  rmSync(outsideProject, { recursive: true, force: true });
});

const files = (dir: string) => Object.fromEntries(readdirSync(dir).sort().map((name) => [name, readFileSync(join(dir, name))]));

describe('a function bundle', () => {
  it('is byte-identical whatever directory it is built into', async () => {
    const near = join(insideProject, 'asset');
    const far = join(outsideProject, 'staging', 'asset.1234', 'deeper');

    await Promise.all([buildFunction('health', near), buildFunction('health', far)]);

    const [built, again] = [files(near), files(far)];
    expect(Object.keys(built)).toEqual(['index.mjs', 'index.mjs.map']);
    expect(Object.keys(again)).toEqual(Object.keys(built));
    expect(again['index.mjs']!.equals(built['index.mjs']!)).toBe(true);
    expect(again['index.mjs.map']!.equals(built['index.mjs.map']!)).toBe(true);
  }, 60_000);

  it("names its sources by their paths from the project root, none by the output directory's", async () => {
    const outDir = join(outsideProject, 'sources');

    await buildFunction('health', outDir);

    const { sources } = JSON.parse(readFileSync(join(outDir, 'index.mjs.map'), 'utf8')) as { sources: string[] };
    expect(sources).toContain('functions/health.ts');
    expect(sources).toEqual(expect.arrayContaining([expect.stringMatching(/^lib\/.+\.ts$/), expect.stringMatching(/^node_modules\//)]));
    expect(sources.filter((source) => source.startsWith('../') || source.startsWith('/'))).toEqual([]);
  }, 60_000);

  it('gives --enable-source-maps stack traces the source file and line, beside the bundle', async () => {
    // Arrange: a module of the project's that throws on its third line, bundled as a function is
    const sourceDir = join(insideProject, 'src');
    mkdirSync(sourceDir, { recursive: true });
    const entry = join(sourceDir, 'fails.ts');
    writeFileSync(entry, "export function fail(): never {\n  const reason: string = 'where am I?';\n  throw new Error(reason);\n}\nfail();\n");
    const outDir = join(outsideProject, 'trace');
    await bundle({ ...esbuildOptions(entry, join(outDir, 'index.mjs')), logLevel: 'silent' });

    // Act
    const run = spawnSync(process.execPath, ['--enable-source-maps', join(outDir, 'index.mjs')], { encoding: 'utf8' });

    // Assert: the path from the project root, resolved beside the map (in Lambda, /var/task/<path>)
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('where am I?');
    expect(run.stderr).toContain(`${join(outDir, relative(PROJECT_ROOT, entry))}:3:`);
  }, 60_000);
});
